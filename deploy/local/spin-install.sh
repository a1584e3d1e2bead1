#!/usr/bin/env bash
# Installs the Spin model checker and gcc (which compiles the verifiers Spin generates) from Debian's
# packages when either is missing; does nothing when both are on PATH. Needs root (apt). Used by the
# model-checking tests (test/unit/model-check).
set -euo pipefail

if command -v spin >/dev/null 2>&1 && command -v gcc >/dev/null 2>&1; then
  exit 0
fi
# shellcheck source=apt-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"
if ! command -v spin >/dev/null 2>&1; then
  apt_install spin spin
fi
if ! command -v gcc >/dev/null 2>&1; then
  apt_install gcc gcc
fi
command -v spin >/dev/null && command -v gcc >/dev/null
spin -V

#!/usr/bin/env bash
# Installs Prometheus and promtool from Debian's packages when either is missing; does nothing when
# both are on PATH. Needs root (apt). The package also registers a system service on :9090; toolgate's
# launcher (deploy/local/prometheus.ts) runs its own instances on other ports and leaves it alone.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
  exit 0
fi
# shellcheck source=apt-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"
apt_install prometheus prometheus
command -v prometheus >/dev/null && command -v promtool >/dev/null
prometheus --version 2>&1 | sed -n 1p

#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (driven by playwright-core at /usr/bin/chromium)
# when it is missing; does nothing when it is there. Needs root (apt).
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium is not installed and installing it needs root: sudo bash $0" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
/usr/bin/chromium --version 2>/dev/null

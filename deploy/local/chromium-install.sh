#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests (driven by playwright-core at /usr/bin/chromium)
# when it is missing; does nothing when it is there. Needs root (apt).
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi
# shellcheck source=apt-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"
apt_install chromium chromium
/usr/bin/chromium --version 2>/dev/null

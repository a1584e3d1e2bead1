#!/usr/bin/env bash
# Installs Prometheus and promtool from Debian's packages when either is missing; does nothing when
# both are on PATH. Needs root (apt). The package also registers a system service on :9090; toolgate's
# launcher (deploy/local/prometheus.ts) runs its own instances on other ports and leaves it alone.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "prometheus is not installed and installing it needs root: sudo bash $0" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends prometheus >/dev/null
command -v prometheus >/dev/null && command -v promtool >/dev/null
prometheus --version 2>&1 | sed -n 1p

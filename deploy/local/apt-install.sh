# Sourced by deploy/local/*-install.sh. `apt_install NAME PACKAGE...` installs the Debian packages
# quietly (no recommends). It needs root: without it, it names NAME as missing, says how to run the
# calling script with sudo, and exits 1.

apt_install() {
  local name=$1
  shift
  if [ "$(id -u)" -ne 0 ]; then
    echo "$name is not installed and installing it needs root: sudo bash $0" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

#!/bin/sh
# Installs the db-read contestant: a venv in .venv beside this script with the
# exact packages of requirements.txt (from PyPI). Needs python3 >= 3.11 with
# venv; on Debian, installs python3 and python3-venv when missing (as root).
# Idempotent: when .venv already holds this requirements.txt, it does nothing.
set -eu
cd "$(dirname "$0")"
stamp=.venv/installed-requirements.txt
if [ -x .venv/bin/python ] && cmp -s requirements.txt "$stamp" 2>/dev/null; then
  exit 0
fi
exec 9>.install.lock
flock 9   # one install at a time in this directory
if [ -x .venv/bin/python ] && cmp -s requirements.txt "$stamp" 2>/dev/null; then
  exit 0
fi

python=${PYTHON:-python3}
if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "install.sh: installing python3 and python3-venv (Debian)" >&2
    apt_install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 "$@"; }
    apt_install python3 python3-venv >&2 || { apt-get update -q >&2 && apt_install python3 python3-venv >&2; }
  fi
  "$python" -c 'import venv, ensurepip' 2>/dev/null || {
    echo "install.sh: $python with the venv module is missing (Debian: apt-get install python3-venv)" >&2
    exit 1
  }
fi
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "install.sh: needs Python 3.11 or later, $python is $("$python" --version 2>&1)" >&2
  exit 1
}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt || {
  echo "install.sh: pip could not install requirements.txt from PyPI (see above)" >&2
  exit 1
}
cp requirements.txt "$stamp"

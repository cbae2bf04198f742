#!/bin/sh
# Installs Flask and gunicorn (PyPI) into .venv beside this script. Idempotent:
# a venv that already has them is left as it is.
set -eu
cd "$(dirname "$0")"
if [ -x .venv/bin/gunicorn ] && .venv/bin/python -c 'import flask' 2>/dev/null; then
  exit 0
fi
python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt

#!/bin/sh
# Starts the grpcio bubble-sort contestant (server.py) on 127.0.0.1:$PORT, h2c.
# Environment: PORT (set by stackbench); PROCESSES (default: one per CPU this
# process may use) and THREADS (per process, default 4). Stops gracefully on
# SIGTERM.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
: "${PORT:?set PORT}"
export PORT
exec "$here/.venv/bin/python" "$here/server.py"

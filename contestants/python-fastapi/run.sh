#!/bin/sh
# Starts the FastAPI contestant under uvicorn on 127.0.0.1:$PORT (serve.py).
#   run.sh dummy | run.sh event-log
# Environment: PORT (set by stackbench); STORE (event-log: influxdb, postgres
# or sqlite, the default) and its settings: INFLUXDB_URL / INFLUXDB_DB,
# POSTGRES_URL / POSTGRES_TABLE, EVENTS_DB (see stores.py); WORKERS (default:
# one per CPU this process may use). uvicorn stops gracefully on SIGTERM.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
export SCENARIO="${1:-dummy}"
export STORE="${STORE:-sqlite}"
: "${PORT:?set PORT}"
export PORT
case "$SCENARIO" in dummy|event-log) ;; *) echo "run.sh: scenario must be dummy or event-log, got $SCENARIO" >&2; exit 2;; esac
case "$STORE" in influxdb|postgres|sqlite) ;; *) echo "run.sh: STORE must be influxdb, postgres or sqlite, got $STORE" >&2; exit 2;; esac
cd "$here"
exec "$here/.venv/bin/python" "$here/serve.py"

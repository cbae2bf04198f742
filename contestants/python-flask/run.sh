#!/bin/sh
# Starts the Flask contestant under gunicorn on 127.0.0.1:$PORT.
#   run.sh dummy | run.sh event-log
# Environment: PORT (set by stackbench); STORE (event-log: sqlite, the
# default, influxdb or postgres) and its settings: EVENTS_DB (SQLite file),
# INFLUXDB_URL / INFLUXDB_DB, POSTGRES_URL / POSTGRES_TABLE (see stores.py);
# WORKERS (default 2 x cores + 1) and THREADS (per worker, default 4).
# gunicorn stops gracefully on SIGTERM (what stackbench sends).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
export SCENARIO="${1:-dummy}"
export STORE="${STORE:-sqlite}"
: "${PORT:?set PORT}"
case "$SCENARIO" in dummy|event-log) ;; *) echo "run.sh: scenario must be dummy or event-log, got $SCENARIO" >&2; exit 2;; esac
case "$STORE" in sqlite|influxdb|postgres) ;; *) echo "run.sh: STORE must be sqlite, influxdb or postgres, got $STORE" >&2; exit 2;; esac
export PORT
exec "$here/.venv/bin/gunicorn" --chdir "$here" -c "$here/gunicorn.conf.py" app:app

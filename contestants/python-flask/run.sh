#!/bin/sh
# Starts the Flask contestant under gunicorn on 127.0.0.1:$PORT.
#   run.sh dummy | run.sh event-log
# Environment: PORT (set by stackbench), EVENTS_DB (event-log's SQLite file),
# WORKERS (gunicorn worker processes, default 2), THREADS (per worker, default 4).
# gunicorn stops gracefully on SIGTERM (what stackbench sends).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
export SCENARIO="${1:-dummy}"
case "$SCENARIO" in dummy|event-log) ;; *) echo "run.sh: scenario must be dummy or event-log, got $SCENARIO" >&2; exit 2;; esac
exec "$here/.venv/bin/gunicorn" --chdir "$here" --bind "127.0.0.1:${PORT:?set PORT}" \
  --workers "${WORKERS:-2}" --threads "${THREADS:-4}" --worker-class gthread \
  --graceful-timeout 3 --log-level warning app:app

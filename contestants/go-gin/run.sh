#!/bin/sh
# Starts the Gin contestant on 127.0.0.1:$PORT (run install.sh first).
#   run.sh dummy
#   run.sh event-log influxdb|postgres|sqlite
# Environment: PORT (set by stackbench); the stores' settings, with defaults:
#   INFLUX_URL=http://127.0.0.1:8086  INFLUX_DB=stackbench_go_gin
#   POSTGRES_URL=postgres://postgres@127.0.0.1:5432/stackbench_test  PG_TABLE=go_gin_events
#   EVENTS_DB=events.db (the SQLite file)
# TLS_CERT and TLS_KEY (PEM files; both or neither): serve HTTPS instead, with
# Go's crypto/tls (http.Server.ServeTLS, what gin's RunTLS calls).
# The server stops gracefully on SIGTERM (http.Server.Shutdown).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
scenario="${1:-dummy}"
case "$scenario" in
  dummy) exec "$here/bin/go-gin" -scenario dummy ;;
  event-log)
    store="${2:-sqlite}"
    case "$store" in influxdb|postgres|sqlite) ;; *) echo "run.sh: the store must be influxdb, postgres or sqlite, got $store" >&2; exit 2;; esac
    exec "$here/bin/go-gin" -scenario event-log -store "$store" ;;
  *) echo "run.sh: the scenario must be dummy or event-log, got $scenario" >&2; exit 2 ;;
esac

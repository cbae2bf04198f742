#!/bin/sh
# Starts the Vert.x contestant on 127.0.0.1:$PORT (run install.sh first).
#   run.sh dummy
#   run.sh event-log influxdb|postgres
#   run.sh db-read
# Environment: PORT (set by stackbench), EVENT_LOOPS (default: the cores this
# process may use), and the stores' settings, with defaults:
#   INFLUX_URL=http://127.0.0.1:8086  INFLUX_DB=stackbench_java_vertx
#   POSTGRES_URL=postgres://postgres@127.0.0.1:5432/stackbench_test  PG_TABLE=java_vertx_events
#   db-read: POSTGRES_URL (vertx-pg, vertx-pg-templates), MYSQL_URL (vertx-mysql), no defaults
# JAVA_OPTS replaces the JVM options below (README.md says why these).
# The server stops gracefully on SIGTERM (the verticles are undeployed).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
: "${PORT:?set PORT}"
jar="$here/target/java-vertx.jar"
[ -f "$jar" ] || { echo "run.sh: $jar is missing: run $here/install.sh first" >&2; exit 1; }
case "${1:-}" in
  dummy|db-read) ;;
  event-log)
    case "${2:-}" in influxdb|postgres) ;; *) echo "run.sh: the event-log store must be influxdb or postgres, got '${2:-}'" >&2; exit 2 ;; esac ;;
  *) echo "run.sh: the scenario must be dummy, event-log or db-read, got '${1:-}'" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
exec java ${JAVA_OPTS:--Xmx256m -XX:+ExitOnOutOfMemoryError} -jar "$jar" "$@"

#!/bin/sh
# Starts the Spring Boot contestant on 127.0.0.1:$PORT (run install.sh first).
#   run.sh dummy
#   run.sh event-log influxdb|postgres
#   run.sh db-read
# Environment: PORT (set by stackbench), BIND (default 127.0.0.1), and the
# stores' settings, with defaults:
#   INFLUX_URL=http://127.0.0.1:8086  INFLUX_DB=stackbench_java_spring
#   POSTGRES_URL=postgres://postgres@127.0.0.1:5432/stackbench_test  PG_TABLE=java_spring_events
#   db-read: POSTGRES_URL (jdbc-pg, jpa-pg) or MYSQL_URL (jdbc-mariadb, jpa-mariadb),
#   one of the two, no default
# JAVA_OPTS replaces the JVM options below (README.md says why these: a
# 256 MiB heap cap, and exit on OutOfMemoryError).
# The server stops gracefully on SIGTERM (Tomcat finishes the requests in flight).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
: "${PORT:?set PORT}"
jar="$here/target/java-spring.jar"
[ -f "$jar" ] || { echo "run.sh: $jar is missing: run $here/install.sh first" >&2; exit 1; }
case "${1:-}" in
  dummy|db-read) ;;
  event-log)
    case "${2:-}" in influxdb|postgres) ;; *) echo "run.sh: the event-log store must be influxdb or postgres, got '${2:-}'" >&2; exit 2 ;; esac ;;
  *) echo "run.sh: the scenario must be dummy, event-log or db-read, got '${1:-}'" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
exec java ${JAVA_OPTS:--Xmx256m -XX:+ExitOnOutOfMemoryError} -jar "$jar" "$@"

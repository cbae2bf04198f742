#!/bin/sh
# Empties the store of run.sh's event-log (the plan's `reset`, run before every start).
#   reset.sh influxdb|postgres   with the same environment as run.sh
set -eu
case "${1:-}" in
  influxdb)
    url="${INFLUX_URL:-http://127.0.0.1:8086}" db="${INFLUX_DB:-stackbench_java_spring}"
    for q in "DROP DATABASE $db" "CREATE DATABASE $db"; do
      out="$(curl -sS --max-time 10 -XPOST "$url/query" --data-urlencode "q=$q")"
      case "$out" in *'"error"'*) echo "reset.sh: InfluxDB at $url answered $q with $out" >&2; exit 1;; esac
    done ;;
  postgres)
    url="${POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/stackbench_test}" table="${PG_TABLE:-java_spring_events}"
    psql -X -q -v ON_ERROR_STOP=1 "$url" -c \
      "DO \$\$ BEGIN IF to_regclass('$table') IS NOT NULL THEN TRUNCATE $table; END IF; END \$\$" ;;
  *) echo "reset.sh: give the store: influxdb or postgres" >&2; exit 2 ;;
esac

#!/bin/sh
# Empties the event-log store (the plan's reset, run before every start):
#   reset.sh influxdb://127.0.0.1:8086/DB          DROP MEASUREMENT events
#   reset.sh postgres://USER@HOST:5432/DB?table=T  TRUNCATE T
# (STORE in the environment when no argument is given). The database or
# table is created when missing. Runs the release's code in a VM of its own.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
if [ $# -gt 0 ]; then export STORE="$1"; fi
: "${STORE:?reset.sh: give the store URL}"
exec "$here/_build/prod/rel/ex_yaws/bin/ex_yaws" eval 'ExYaws.Reset.main()'

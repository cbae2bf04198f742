#!/bin/sh
# Starts the Elixir/Yaws contestant on $BIND:$PORT (BIND defaults to 127.0.0.1).
#   run.sh dummy
#   STORE=influxdb://127.0.0.1:8086/DB run.sh event-log
#   STORE=postgres://USER@127.0.0.1:5432/DB?table=NAME run.sh event-log
# POOL=N overrides the store's connection count (4 per CPU, at least 8).
# The release's start script execs the VM, so SIGTERM reaches it: OTP stops
# every application in order and the VM exits 0.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
export SCENARIO="${1:-dummy}"
case "$SCENARIO" in dummy|event-log) ;; *) echo "run.sh: scenario must be dummy or event-log, got $SCENARIO" >&2; exit 2;; esac
: "${PORT:?run.sh: set PORT}"
rel="$here/_build/prod/rel/ex_yaws/bin/ex_yaws"
[ -x "$rel" ] || { echo "run.sh: $rel is missing; run install.sh first" >&2; exit 1; }
exec "$rel" start

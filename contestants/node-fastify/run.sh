#!/bin/sh
# Starts the Fastify contestant on 127.0.0.1:$PORT.
#   run.sh dummy | run.sh event-log
# Environment: PORT (set by stackbench), STORE (event-log: sqlite:PATH,
# postgres://USER@HOST:5432/DB?table=NAME, influxdb://HOST:8086/DB),
# WORKERS (processes; default one per core of the affinity mask / CPU quota).
# Stops gracefully on SIGTERM (what stackbench sends).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
case "${1:-}" in dummy|event-log) ;; *) echo "run.sh: give the scenario, dummy or event-log (got '${1:-}')" >&2; exit 2;; esac
[ -d "$here/node_modules/fastify" ] || { echo "run.sh: node_modules is missing: run $here/install.sh first" >&2; exit 1; }
export NODE_ENV=production
exec node "$here/src/server.js" "$1"

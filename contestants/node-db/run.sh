#!/bin/sh
# Starts the db-read contestant on 127.0.0.1:$PORT, serving the drivers whose
# database is given: POSTGRES_URL (pg, sequelize-pg), MYSQL_URL (mysql2,
# sequelize-mysql), REDIS_URL (ioredis). WORKERS sets the processes (default
# one per core of the affinity mask / CPU quota). Stops gracefully on SIGTERM.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
[ -d "$here/node_modules/fastify" ] || { echo "run.sh: node_modules is missing: run $here/install.sh first" >&2; exit 1; }
export NODE_ENV=production
exec node "$here/src/server.js"

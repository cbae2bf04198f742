#!/bin/sh
# Starts the db-read contestant on 127.0.0.1:$PORT (run install.sh first).
# Environment: PORT (set by stackbench) and the databases to serve, any of:
#   POSTGRES_URL=postgres://postgres@127.0.0.1:5432/stackbench_test?sslmode=disable  (pgx, lib-pq, sqlx)
#   MYSQL_URL=mysql://root@127.0.0.1:3306/stackbench_test                            (go-mysql)
#   SQLITE_PATH=/path/items.db                                                       (sqlite)
# Load them first with `sb-db-read seed --store URL`. The server stops
# gracefully on SIGTERM (http.Server.Shutdown).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
: "${PORT:?set PORT}"
exec "$here/bin/go-db"

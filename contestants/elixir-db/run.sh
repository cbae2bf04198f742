#!/bin/sh
# Starts the Elixir db-read contestant on $BIND:$PORT (BIND defaults to
# 127.0.0.1), serving the drivers of every database given:
#   POSTGRES_URL=postgres://USER@HOST:5432/DB   p1-pgsql, p1-pgsql-repo
#   MYSQL_URL=mysql://USER@HOST:3306/DB          p1-mysql, p1-mysql-repo
#   REDIS_URL=redis://HOST:6379/0                eredis
# POOL=N overrides every pool's size (SQL: 16 per CPU, at most 30; Redis: 1
# per CPU). The release's start script execs the VM, so SIGTERM reaches it.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
: "${PORT:?run.sh: set PORT}"
rel="$here/_build/prod/rel/ex_db/bin/ex_db"
[ -x "$rel" ] || { echo "run.sh: $rel is missing; run install.sh first" >&2; exit 1; }
exec "$rel" start

#!/bin/sh
# Starts the Python db-read contestant under uvicorn on 127.0.0.1:$PORT (serve.py).
# Environment: PORT (set by stackbench); POSTGRES_URL (drivers psycopg,
# asyncpg, sqlalchemy), MYSQL_URL (pymysql), REDIS_URL (redis): exactly the
# drivers whose database is given are served; WORKERS (default: one per CPU
# this process may use); DB_TIMEOUT (seconds before a 503, default 1.5).
# uvicorn stops gracefully on SIGTERM.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
: "${PORT:?set PORT}"
export PORT
if [ -z "${POSTGRES_URL:-}${MYSQL_URL:-}${REDIS_URL:-}" ]; then
  echo "run.sh: no database given; set POSTGRES_URL, MYSQL_URL and/or REDIS_URL" >&2
  exit 2
fi
cd "$here"
exec "$here/.venv/bin/python" "$here/serve.py"

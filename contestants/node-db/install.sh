#!/bin/sh
# Installs Fastify, pg, mysql2, ioredis and Sequelize (pinned in
# package-lock.json) into node_modules beside this script: pure JavaScript,
# nothing to compile, so npm runs no install scripts. Idempotent: when
# node_modules was installed from this very lock file, it is left as it is.
# Seeding the databases is not done here (the plan's build runs
# `sb-db-read seed --store URL` after this script).
set -eu
cd "$(dirname "$0")"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install.sh: needs Node.js 20 or newer with npm (node and npm are not on PATH)" >&2
  exit 1
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
  echo "install.sh: needs Node.js 20 or newer, found $(node --version)" >&2
  exit 1
fi

stamp=node_modules/.stackbench-lock
lock="$(cksum < package-lock.json) node-$(node --version)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock" ]; then
  exit 0
fi
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
node -e 'for (const m of ["fastify", "pg", "mysql2/promise", "ioredis", "sequelize", "pg-hstore"]) require(m)'
echo "$lock" > "$stamp"

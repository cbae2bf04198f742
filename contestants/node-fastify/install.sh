#!/bin/sh
# Installs the contestant's npm packages (pinned in package-lock.json) into
# node_modules beside this script; better-sqlite3 is compiled from source
# when no prebuilt binary can be fetched, which needs g++, make and python3.
# Idempotent: when node_modules was installed from this very lock file, it
# is left as it is.
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
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock" ] \
   && [ -f node_modules/better-sqlite3/build/Release/better_sqlite3.node ]; then
  exit 0
fi

missing=""
for tool in g++ make python3; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
  echo "install.sh: installing g++ make python3 (missing:$missing) to build better-sqlite3" >&2
  if ! apt-get install -y -o DPkg::Lock::Timeout=600 g++ make python3 >/dev/null; then
    apt-get update -o DPkg::Lock::Timeout=600 >/dev/null &&
      apt-get install -y -o DPkg::Lock::Timeout=600 g++ make python3 >/dev/null ||
      { echo "install.sh: cannot install g++ make python3 (needed to build better-sqlite3)" >&2; exit 1; }
  fi
fi

# node-gyp builds against the headers of the running node when they are
# installed beside it (Debian/NodeSource: /usr/include/node), instead of
# downloading them.
prefix="$(dirname "$(dirname "$(command -v node)")")"
if [ -f "$prefix/include/node/node.h" ]; then
  npm_config_nodedir="$prefix"
  export npm_config_nodedir
fi

npm ci --no-audit --no-fund --loglevel=error
node -e 'require("better-sqlite3")(":memory:").close(); require("fastify"); require("pg"); require("undici")'
echo "$lock" > "$stamp"

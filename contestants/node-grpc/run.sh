#!/bin/sh
# Starts the gRPC contestant (sort.v1.SortService/BubbleSort over h2c) on
# 127.0.0.1:$PORT. Environment: PORT (set by stackbench), WORKERS (processes;
# default one per core of the affinity mask / CPU quota), TLS_CERT and TLS_KEY
# (PEM files, both or neither: gRPC over TLS instead of h2c). Stops gracefully on
# SIGTERM (what stackbench sends).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
[ -d "$here/node_modules/@grpc/grpc-js" ] || { echo "run.sh: node_modules is missing: run $here/install.sh first" >&2; exit 1; }
export NODE_ENV=production
exec node "$here/src/server.js"

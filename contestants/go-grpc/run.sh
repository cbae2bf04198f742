#!/bin/sh
# Starts the grpc-go bubble-sort contestant on h2c 127.0.0.1:$PORT (run
# install.sh first). It stops gracefully on SIGTERM (GracefulStop).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
: "${PORT:?set PORT}"
exec "$here/bin/go-grpc"

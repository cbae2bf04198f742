#!/bin/sh
# Starts the grpc-java bubble-sort contestant on h2c 127.0.0.1:$PORT (run
# install.sh first). JAVA_OPTS replaces the JVM options below (see README.md:
# the heap is part of the stack). It stops gracefully on SIGTERM (the JVM's
# shutdown hook calls Server.shutdown, then waits up to 4 s for calls in flight).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
: "${PORT:?set PORT}"
jar="$here/target/java-grpc.jar"
[ -f "$jar" ] || { echo "run.sh: $jar is missing: run $here/install.sh first" >&2; exit 1; }
# 256 MiB of heap within the plan's 512 MiB: the rest is for metaspace, JIT
# code cache, thread stacks and Netty's direct buffers (capped at 64 MiB).
# shellcheck disable=SC2086
exec java ${JAVA_OPTS:--Xms256m -Xmx256m -XX:MaxDirectMemorySize=64m -XX:+ExitOnOutOfMemoryError} -jar "$jar"

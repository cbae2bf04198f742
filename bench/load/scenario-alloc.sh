#!/usr/bin/env bash
# Heap allocations per request of the load engine (valgrind memcheck's "total heap usage"), for
# the rows of scenario-cost.sh: the built-in `dummy` (its file) and bench/load/dummy-like.hurl
# over HTTP/1.1, and dummy-like.hurl as an h2c scenario file. Against nginx (`return 200
# '{"count":1}'`, core 0, h2c on a second port); the generator on core 1, 10 connections, one
# thread, every answer checked. Each is run SHORT and LONG seconds; (allocs_long - allocs_short) /
# (requests_long - requests_short) takes start-up and exit out.
#
# Usage: cargo build --release && bench/load/scenario-alloc.sh [SHORT LONG] (default 2 5)
# SB=path/to/stackbench to measure another build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
sb=${SB:-$here/../../target/release/stackbench}
short=${1:-2}
long=${2:-5}
port=${PORT:-18494}
h2=$((port + 1))
dir=$(mktemp -d)
start_nginx "$dir" "$port" "$h2"
trap 'kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true; rm -rf "$dir"' EXIT
printf 'protocol = "h2c"\n[[flow]]\nfile = "%s"\n' "$here/dummy-like.hurl" >"$dir/h2c.toml"

# run NAME PORT SECONDS ARGS...: prints "allocations requests errors" of one run under memcheck.
run() {
  local name=$1 at=$2 secs=$3 out
  shift 3
  out="$dir/$name.$secs"
  taskset -c 1 valgrind --tool=memcheck "$sb" load "http://127.0.0.1:$at" -c 10 --threads 1 \
    -d "${secs}s" -q --check-every 1 --json "$out.json" "$@" >/dev/null 2>"$out.err"
  local allocs
  allocs=$(grep -o 'total heap usage: [0-9,]* allocs' "$out.err" | tr -d , | awk '{print $4}')
  python3 - "$out.json" "$allocs" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2], r["summary"]["requests"], r["summary"]["errors"])
PY
}

per_request() {
  local name=$1 at=$2
  shift 2
  read -r a1 n1 e1 < <(run "$name" "$at" "$short" "$@")
  read -r a2 n2 e2 < <(run "$name" "$at" "$long" "$@")
  python3 -c "import sys; a=list(map(int, sys.argv[1:])); print(f'{(a[2]-a[0])/(a[3]-a[1]):.4f}', a[4]+a[5])" \
    "$a1" "$n1" "$a2" "$n2" "$e1" "$e2"
}

echo "heap allocations per request (errors)"
read -r dummy derr < <(per_request dummy "$port" --scenario dummy)
echo "  dummy (built-in)          $dummy ($derr)"
read -r file ferr < <(per_request file "$port" --scenario-file "$here/dummy-like.hurl")
echo "  dummy-like.hurl           $file ($ferr)"
read -r h2c herr < <(per_request h2c "$h2" --scenario-file "$dir/h2c.toml")
echo "  dummy-like.hurl on h2c    $h2c ($herr)"

#!/usr/bin/env bash
# The load engine's user-space instructions per request (callgrind) on the built-in `dummy`
# path, on the same request written as a scenario file with a template, a capture and
# asserts (bench/load/dummy-like.hurl), and on the built-in's own scenario file loaded as a
# file (scenarios/builtin/dummy.toml: drawn variables, a regex assert), side by side against
# nginx (`return 200 '{"count":1}'`, core 0); the generator on core 1, 10 connections, one
# thread, every answer checked (--check-every 1). Each is run SHORT and LONG seconds;
# (Ir_long - Ir_short) / (requests_long - requests_short) takes start-up and exit out.
#
# Usage: cargo build --release && bench/load/scenario-cost.sh [SHORT LONG] (default 2 5)
# SB=path/to/stackbench to measure another build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
sb=${SB:-$here/../../target/release/stackbench}
short=${1:-2}
long=${2:-5}
port=${PORT:-18493}
dir=$(mktemp -d)
start_nginx "$dir" "$port"
trap 'kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true; rm -rf "$dir"' EXIT

# run NAME SECONDS ARGS...: prints "instructions requests errors" of one run under callgrind.
run() {
  local name=$1 secs=$2 out
  shift 2
  out="$dir/$name.$secs"
  taskset -c 1 valgrind --tool=callgrind --callgrind-out-file="$out.cg" \
    "$sb" load "http://127.0.0.1:$port" -c 10 --threads 1 -d "${secs}s" --check-every 1 -q \
    --json "$out.json" "$@" >/dev/null 2>"$out.err"
  local ir
  ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$out.cg")
  python3 - "$out.json" "$ir" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2], r["summary"]["requests"], r["summary"]["errors"])
PY
}

per_request() {
  local name=$1
  shift
  read -r ir1 n1 e1 < <(run "$name" "$short" "$@")
  read -r ir2 n2 e2 < <(run "$name" "$long" "$@")
  python3 -c "import sys; a=list(map(int, sys.argv[1:])); print(round((a[2]-a[0])/(a[3]-a[1])), a[1], a[3], a[4]+a[5])" \
    "$ir1" "$n1" "$ir2" "$n2" "$e1" "$e2"
}

read -r dummy dn1 dn2 derr < <(per_request dummy --scenario dummy)
read -r file fn1 fn2 ferr < <(per_request file --scenario-file "$here/dummy-like.hurl")
read -r toml tn1 tn2 terr < <(per_request toml --scenario-file "$here/../../scenarios/builtin/dummy.toml")
echo "instructions per request (requests in the ${short}s and ${long}s runs; errors)"
echo "  dummy (built-in)     $dummy   ($dn1, $dn2; $derr errors)"
echo "  dummy-like.hurl      $file   ($fn1, $fn2; $ferr errors)"
echo "  builtin/dummy.toml   $toml   ($tn1, $tn2; $terr errors)"
python3 -c "import sys; print(f'  .hurl / built-in     {int(sys.argv[2]) / int(sys.argv[1]):.2f}')" "$dummy" "$file"
python3 -c "import sys; print(f'  .toml / built-in     {int(sys.argv[2]) / int(sys.argv[1]):.2f}')" "$dummy" "$toml"

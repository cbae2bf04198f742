#!/usr/bin/env bash
# The load engine's user-space instructions per request (callgrind) on the built-in `dummy`
# (its scenario file, scenarios/builtin/dummy.toml: five drawn variables in the body, a regex
# assert on Content-Type, every answer checked), on the same POST written as a file with a
# template, a capture and asserts (bench/load/dummy-like.hurl, every answer checked), and on
# the engine's floor: the same POST as a fixed request (-m/-H/-b), its status only; and on
# bench/load/cookie-like.hurl, dummy-like's POST to a path whose answer sets a cookie, with
# --keep-cookies (each answer's Set-Cookie stored, the cookie sent back on the next request). Against
# nginx (`return 200 '{"count":1}'`, core 0); the generator on core 1, 10 connections, one
# thread. Each is run for SHORT and LONG requests (-n); (Ir_long - Ir_short) / (LONG - SHORT),
# of the worker thread (callgrind --separate-threads; the main thread's collector and record
# are per second and per run, and callgrind's slowdown would weigh them fifty times their
# native share), takes start-up and exit out: a count of requests, not of seconds, so that a
# busy machine, which lets the client under valgrind run less, does not move it. Then:
# - each runs SECS seconds (default 5) outside valgrind: requests per CPU-second (user +
#   system) of the generator, a figure the machine's noise moves by a few percent where the
#   instruction counts move by tenths of one;
# - the three files, and dummy-like.hurl as an h2c file (nginx's h2c port), under memcheck: heap
#   allocations per request, LONG minus SHORT as above;
# The same files beside Hurl itself, with every feature group's file: bench/load/beside-hurl.sh.
#
# Usage: cargo build --release && bench/load/scenario-cost.sh [SHORT LONG] (default 1000 5000)
# SB=path/to/stackbench to measure another build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
sb=${SB:-$here/../../target/release/stackbench}
short=${1:-1000}
long=${2:-5000}
secs=${SECS:-5}
port=${PORT:-18493}
h2=$((port + 1))
dir=$(mktemp -d)
trap 'kill "$(cat "$dir/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$dir"' EXIT
start_nginx "$dir" "$port" "$h2"
printf 'protocol = "h2c"\n[[flow]]\nfile = "%s"\n' "$here/dummy-like.hurl" >"$dir/h2c.toml"

# run TOOL NAME PORT REQUESTS ARGS...: prints "count requests errors" of one run under
# valgrind's TOOL: callgrind counts the worker thread's instructions, memcheck heap allocations.
run() {
  local tool=$1 name=$2 at=$3 n=$4 out count
  shift 4
  out="$dir/$name.$tool.$n"
  local opts=(--tool="$tool")
  [ "$tool" = callgrind ] && opts+=(--separate-threads=yes --callgrind-out-file="$out.cg")
  taskset -c 1 valgrind "${opts[@]}" \
    "$sb" load "http://127.0.0.1:$at" -c 10 --threads 1 -n "$n" -q \
    --json "$out.json" "$@" >/dev/null 2>"$out.err" ||
    { echo "$name ($tool, -n $n) failed:" >&2; tail -n 5 "$out.err" >&2; return 1; }
  if [ "$tool" = callgrind ]; then
    # The busiest thread but the main one (callgrind numbers threads as they start).
    count=$(for f in "$out.cg"-*; do
      [ "$((10#${f##*-}))" = 1 ] || awk '/^(summary|totals):/ {print $2; exit}' "$f"
    done | sort -n | tail -n 1)
  else
    count=$(grep -o 'total heap usage: [0-9,]* allocs' "$out.err" | tr -d , | awk '{print $4}')
  fi
  python3 - "$out.json" "$count" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2], r["summary"]["requests"], r["summary"]["errors"])
PY
}

# per_request TOOL NAME PORT ARGS...: "count-per-request requests_short requests_long errors".
per_request() {
  local tool=$1 name=$2 at=$3
  shift 3
  read -r c1 n1 e1 < <(run "$tool" "$name" "$at" "$short" "$@")
  read -r c2 n2 e2 < <(run "$tool" "$name" "$at" "$long" "$@")
  python3 -c "import sys; a=list(map(int, sys.argv[1:])); x=(a[2]-a[0])/(a[3]-a[1]); print(round(x) if x >= 10 else f'{x:.4f}', a[1], a[3], a[4]+a[5])" \
    "$c1" "$n1" "$c2" "$n2" "$e1" "$e2"
}

event='{"type":"page_view","source":"web","value":1.5,"timestamp":1764460800000}'
fixed_args=(-m POST -H 'Content-Type: application/json' -b "$event")
dummy_args=(--scenario dummy --check-every 1)
file_args=(--scenario-file "$here/dummy-like.hurl" --check-every 1)
cookie_args=(--scenario-file "$here/cookie-like.hurl" --check-every 1 --keep-cookies)
read -r fixed xn1 xn2 xerr < <(per_request callgrind fixed "$port" "${fixed_args[@]}")
read -r dummy dn1 dn2 derr < <(per_request callgrind dummy "$port" "${dummy_args[@]}")
read -r file fn1 fn2 ferr < <(per_request callgrind file "$port" "${file_args[@]}")
read -r cookie cn1 cn2 cerr < <(per_request callgrind cookie "$port" "${cookie_args[@]}")
echo "instructions per request of the worker thread (-n $short and -n $long; errors)"
echo "  fixed request        $fixed   ($xn1, $xn2; $xerr errors)"
echo "  dummy (built-in)     $dummy   ($dn1, $dn2; $derr errors)"
echo "  dummy-like.hurl      $file   ($fn1, $fn2; $ferr errors)"
echo "  cookie-like.hurl     $cookie   ($cn1, $cn2; $cerr errors)"
python3 -c "import sys; print(f'  built-in / fixed     {int(sys.argv[2]) / int(sys.argv[1]):.2f}')" "$fixed" "$dummy"
python3 -c "import sys; print(f'  .hurl / fixed        {int(sys.argv[2]) / int(sys.argv[1]):.2f}')" "$fixed" "$file"
python3 -c "import sys; print(f'  cookie .hurl / fixed {int(sys.argv[2]) / int(sys.argv[1]):.2f}')" "$fixed" "$cookie"
echo "requests per generator CPU-second (${secs}s, natively)"
echo "  fixed request        $(per_cpu_second fixed "${fixed_args[@]}")"
echo "  dummy (built-in)     $(per_cpu_second dummy "${dummy_args[@]}")"
echo "  dummy-like.hurl      $(per_cpu_second file "${file_args[@]}")"
echo "  cookie-like.hurl     $(per_cpu_second cookie "${cookie_args[@]}")"
echo "heap allocations per request (memcheck; errors)"
read -r a _ _ e < <(per_request memcheck dummy "$port" "${dummy_args[@]}")
echo "  dummy (built-in)         $a   ($e errors)"
read -r a _ _ e < <(per_request memcheck file "$port" "${file_args[@]}")
echo "  dummy-like.hurl          $a   ($e errors)"
read -r a _ _ e < <(per_request memcheck cookie "$port" "${cookie_args[@]}")
echo "  cookie-like.hurl         $a   ($e errors)"
# The h2c file lives in $dir, the .hurl it names in $here: a scenario reads files under its root.
read -r a _ _ e < <(per_request memcheck h2c "$h2" --scenario-file "$dir/h2c.toml" --check-every 1 \
  --file-root "$here")
echo "  dummy-like.hurl on h2c   $a   ($e errors)"

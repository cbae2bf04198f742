#!/usr/bin/env bash
# The load engine against the kernel's floor, side by side in one run: how many
# HTTP/1.1 keep-alive requests each client completes per CPU-second of its own
# (user + system), and how many syscalls each makes per request.
#
#   floor           crates/load/examples/floor.rs: one send and one recv per request,
#                   epoll, nothing else (no clock, no parsing, no recording)
#   sb epoll        stackbench load, --io epoll (the default)
#   sb io_uring     stackbench load, --io io_uring
#   wrk             the anchor
#
# The server is nginx (one worker) on core 0 answering `return 200`; every client
# runs on core 1 with 100 connections for DURATION. Rounds alternate the clients,
# so a change in the machine's load touches all of them. Then each client runs
# 2 s under `strace -c -f` for its syscall count per request (strace slows it;
# the counts, not the rates, are the point there).
#
# PROTO=h2c does the same over h2c (nginx's h2c port, one stream per connection at a
# time): floor --h2c (one send of a pre-encoded HEADERS frame and one recv per request,
# the answer's frames only counted), stackbench load --http2, and h2load -m1.
#
# STACKBENCH_BASE=PATH also runs that build of stackbench (base-epoll and base-io_uring, or
# base-h2c) in every round, so a change is measured against the build before it in the same run.
# SB_IO=io_uring runs the h2c clients of stackbench on io_uring.
#
# Usage: [PROTO=h2c] bench/load/floor.sh [ROUNDS] [DURATION]     (defaults: 5 rounds, 10s)
# Needs: nginx-light, wrk (h2c: nghttp2-client for h2load), strace, and
# `cargo build --release --workspace --bins --examples`.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/load/common.sh
rounds=${1:-5}
duration=${2:-10s}
secs=${duration%s}
target=${CARGO_TARGET_DIR:-target}/release
sb=${STACKBENCH:-$target/stackbench}
floor=$target/examples/floor
base=${STACKBENCH_BASE:-}
proto=${PROTO:-http1}
case $proto in
  http1) tools=(nginx wrk strace taskset python3) ;;
  h2c) tools=(nginx h2load strace taskset python3) ;;
  *) echo "PROTO=$proto: use http1 (the default) or h2c" >&2; exit 2 ;;
esac
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y nginx-light wrk nghttp2-client strace" >&2; exit 1; }
done
for bin in "$sb" "$floor" ${base:+"$base"}; do
  [ -x "$bin" ] || { echo "no $bin: cargo build --release --workspace --bins --examples" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
port=18390
h2port=18391
start_nginx "$work" "$port" "$h2port"
url="http://127.0.0.1:$port/"
h2url="http://127.0.0.1:$h2port/"

# run NAME SECONDS [strace]: one client; prints "requests user_s system_s" (or, with strace, "requests syscalls").
run() {
  local name=$1 s=$2 trace=${3:-}
  local pre=(taskset -c 1)
  [ -n "$trace" ] && pre=(strace -c -f -o "$work/strace" taskset -c 1)
  local TIMEFORMAT='%U %S'
  case $name in
    floor)
      { time "${pre[@]}" "$floor" "127.0.0.1:$port" 100 "$s" >"$work/out"; } 2>"$work/time"
      req=$(awk '{print $2}' "$work/out") ;;
    sb-epoll|sb-io_uring|base-epoll|base-io_uring)
      local bin=$sb
      [ "${name%-*}" = base ] && bin=$base
      { time "${pre[@]}" "$bin" load "$url" -c 100 -d "${s}s" --threads 1 -q --io "${name#*-}" --json "$work/r.json" >/dev/null; } 2>"$work/time"
      req=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["requests"])' "$work/r.json") ;;
    wrk)
      { time "${pre[@]}" wrk -t1 -c100 -d"${s}s" "$url" >"$work/out"; } 2>"$work/time"
      req=$(grep -oE '^ *[0-9]+ requests in' "$work/out" | grep -oE '[0-9]+') ;;
    floor-h2c)
      { time "${pre[@]}" "$floor" --h2c "127.0.0.1:$h2port" 100 "$s" >"$work/out"; } 2>"$work/time"
      req=$(awk '{print $2}' "$work/out") ;;
    sb-h2c|base-h2c)
      local bin=$sb
      [ "$name" = base-h2c ] && bin=$base
      { time "${pre[@]}" "$bin" load "$h2url" --http2 -c 100 -d "${s}s" --threads 1 -q --io "${SB_IO:-epoll}" --json "$work/r.json" >/dev/null; } 2>"$work/time"
      req=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["requests"])' "$work/r.json") ;;
    h2load)
      { time "${pre[@]}" h2load -t1 -c100 -m1 -D "$s" "$h2url" >"$work/out"; } 2>"$work/time"
      req=$(grep -oE '[0-9]+ done' "$work/out" | head -1 | grep -oE '[0-9]+') ;;
  esac
  if [ -n "$trace" ]; then
    echo "$req $(awk '$NF=="total" {print $(NF-2)}' "$work/strace")"
  else
    echo "$req $(cat "$work/time")"
  fi
}

clients=(floor sb-epoll sb-io_uring wrk)
[ "$proto" = h2c ] && clients=(floor-h2c sb-h2c h2load)
if [ -n "$base" ]; then
  if [ "$proto" = h2c ]; then clients+=(base-h2c); else clients+=(base-epoll base-io_uring); fi
fi
echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# nginx $(nginx -v 2>&1 | cut -d/ -f2) on core 0 (1 worker); clients on core 1, -c 100, $duration"
[ -n "$base" ] && echo "# stackbench: $sb; base: $base"
printf '%-6s %-12s %10s %8s %8s %14s\n' round client requests user_s sys_s req/cpu-s
: >"$work/rates"
for round in $(seq "$rounds"); do
  for c in "${clients[@]}"; do
    read -r req u s <<<"$(run "$c" "$secs")"
    rate=$(python3 -c "print(round($req / ($u + $s)))")
    printf '%-6s %-12s %10s %8s %8s %14s\n' "$round" "$c" "$req" "$u" "$s" "$rate"
    echo "$round $c $rate" >>"$work/rates"
  done
done
echo "# syscalls per request (2 s each under strace -c -f)"
for c in "${clients[@]}"; do
  read -r req calls <<<"$(run "$c" 2 strace)"
  python3 -c "print(f'{\"$c\":<12} {$calls / $req:.2f} syscalls per request ({$calls} for {$req})')"
done
python3 - "$work/rates" <<'PY'
import statistics, sys
rates = {}
for line in open(sys.argv[1]):
    r, c, v = line.split()
    rates.setdefault(int(r), {})[c] = float(v)
def ratio(a, b):
    v = sorted(x[a] / x[b] for x in rates.values())
    return f"median {statistics.median(v):.2f} (min {v[0]:.2f}, max {v[-1]:.2f}, {len(v)} rounds)"
pairs = (("sb-epoll", "wrk"), ("sb-io_uring", "wrk"), ("floor", "wrk"), ("sb-epoll", "floor"),
         ("sb-io_uring", "sb-epoll"), ("sb-h2c", "h2load"), ("floor-h2c", "h2load"), ("sb-h2c", "floor-h2c"),
         ("base-epoll", "wrk"), ("sb-epoll", "base-epoll"), ("base-io_uring", "wrk"),
         ("sb-io_uring", "base-io_uring"), ("base-h2c", "h2load"), ("sb-h2c", "base-h2c"))
for a, b in pairs:
    if a in rates[1] and b in rates[1]:
        print(f"{a} / {b}, requests per CPU-second: {ratio(a, b)}")
PY
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

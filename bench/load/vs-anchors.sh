#!/usr/bin/env bash
# stackbench load vs wrk (HTTP/1.1) and vs h2load (h2c), side by side in one run.
#
# The server is nginx (Debian nginx-light), one worker pinned to core 0, answering
# `return 200 '{"count":1}'` (application/json). Each load generator is pinned to
# core 1 with one thread and 100 connections for 10 s. The figure of merit is
# requests completed per CPU-second of the generator process (user + system, from
# the kernel's rusage of the child), so a generator that spends less CPU per request
# wins even when nginx is the bottleneck. stackbench records every latency in its
# HdrHistogram while doing so. Each round runs the anchor and stackbench back to
# back; the script prints every round and the median ratio with its spread.
#
# Usage: bench/load/vs-anchors.sh [ROUNDS] [DURATION]      (defaults: 5 rounds, 10s)
# Needs: nginx-light, wrk, nghttp2-client (h2load), and a release build:
#   apt-get install -y nginx-light wrk nghttp2-client && cargo build --release
# STACKBENCH=path/to/stackbench overrides the binary; SB_IO=io_uring runs it with --io io_uring.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/load/common.sh
rounds=${1:-5}
duration=${2:-10s}
secs=${duration%s}
sb=${STACKBENCH:-${CARGO_TARGET_DIR:-target}/release/stackbench}
io=${SB_IO:-epoll}
for tool in nginx wrk h2load taskset python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y nginx-light wrk nghttp2-client" >&2; exit 1; }
done
[ -x "$sb" ] || { echo "no stackbench binary at $sb: cargo build --release (or set STACKBENCH)" >&2; exit 1; }

work=$(mktemp -d)
trap 'kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
h1=18380
h2=18381
start_nginx "$work" "$h1" "$h2"


echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# nginx $(nginx -v 2>&1 | cut -d/ -f2) on core 0 (1 worker); generators on core 1, 1 thread, -c 100, $duration, stackbench --io $io"
printf '%-6s %-5s %14s %14s %14s %14s %8s\n' proto round anchor_req anchor_req/cpu sb_req sb_req/cpu ratio
declare -a r1 r2
for round in $(seq "$rounds"); do
  # HTTP/1.1: wrk vs stackbench
  cpu_of "$work/wrk" taskset -c 1 wrk -t1 -c100 -d"$duration" "http://127.0.0.1:$h1/"
  wrk_req=$(grep -oE '^ *[0-9]+ requests in' "$work/wrk.stdout" | grep -oE '[0-9]+')
  cpu_of "$work/sb1" taskset -c 1 "$sb" load "http://127.0.0.1:$h1/" --io "$io" -c 100 -d "$duration" --threads 1 -q --json "$work/sb1.json"
  sb_req=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["requests"])' "$work/sb1.json")
  line=$(python3 - "$work/wrk" "$wrk_req" "$work/sb1" "$sb_req" <<'PY'
import sys
def cpu(p): u, s = open(p).read().split(); return float(u) + float(s)
a, b = int(sys.argv[2]) / cpu(sys.argv[1]), int(sys.argv[4]) / cpu(sys.argv[3])
print(f"{sys.argv[2]} {a:.0f} {sys.argv[4]} {b:.0f} {b / a:.3f}")
PY
)
  read -r ar arc br brc ratio <<<"$line"
  printf '%-6s %-5s %14s %14s %14s %14s %8s\n' http1 "$round" "$ar" "$arc" "$br" "$brc" "$ratio"
  r1+=("$ratio")

  # h2c: h2load vs stackbench --http2
  cpu_of "$work/h2l" taskset -c 1 h2load -t1 -c100 -m1 -D "$secs" "http://127.0.0.1:$h2/"
  h2_req=$(grep -oE '^requests: [0-9]+ total, [0-9]+ started, [0-9]+ done' "$work/h2l.stdout" | grep -oE '[0-9]+ done' | grep -oE '[0-9]+')
  cpu_of "$work/sb2" taskset -c 1 "$sb" load "http://127.0.0.1:$h2/" --http2 --io "$io" -c 100 -d "$duration" --threads 1 -q --json "$work/sb2.json"
  sb_req=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["requests"])' "$work/sb2.json")
  line=$(python3 - "$work/h2l" "$h2_req" "$work/sb2" "$sb_req" <<'PY'
import sys
def cpu(p): u, s = open(p).read().split(); return float(u) + float(s)
a, b = int(sys.argv[2]) / cpu(sys.argv[1]), int(sys.argv[4]) / cpu(sys.argv[3])
print(f"{sys.argv[2]} {a:.0f} {sys.argv[4]} {b:.0f} {b / a:.3f}")
PY
)
  read -r ar arc br brc ratio <<<"$line"
  printf '%-6s %-5s %14s %14s %14s %14s %8s\n' h2c "$round" "$ar" "$arc" "$br" "$brc" "$ratio"
  r2+=("$ratio")
done
python3 - "${r1[*]}" "${r2[*]}" <<'PY'
import statistics, sys
for name, anchor, xs in (("http1", "wrk", sys.argv[1]), ("h2c", "h2load", sys.argv[2])):
    v = sorted(float(x) for x in xs.split())
    print(f"{name}: stackbench requests per generator CPU-second / {anchor}'s = median {statistics.median(v):.2f} "
          f"(min {v[0]:.2f}, max {v[-1]:.2f}, {len(v)} rounds)")
PY
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

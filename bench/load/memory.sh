#!/usr/bin/env bash
# Bounded memory: the engine's resident set size after 1 minute and near the end of
# a 10-minute run (open model at a fixed rate, HTTP/1.1, every latency recorded).
# Per-second histograms are merged and dropped as the run goes; the timeline grows
# by one small row per second. RSS should be flat from minute 1 to minute 10.
#
# Usage: bench/load/memory.sh [RATE] [MINUTES]     (defaults: 3000 req/s, 10)
# Server: nginx (nginx-light) pinned to core 0; load pinned to core 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/load/common.sh
rate=${1:-3000}
minutes=${2:-10}
sb=${STACKBENCH:-${CARGO_TARGET_DIR:-target}/release/stackbench}
[ -x "$sb" ] || { echo "no stackbench binary at $sb: cargo build --release (or set STACKBENCH)" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
port=18382
start_nginx "$work" "$port"

taskset -c 1 "$sb" load "http://127.0.0.1:$port/" --rate "$rate" -d "${minutes}m" --threads 1 -q \
  --json "$work/run.json" --hlog "$work/run.hlog" >"$work/summary.txt" &
pid=$!
rss() { awk '/VmRSS/ {print $2 " kB"}' "/proc/$pid/status"; }
sleep 60
echo "RSS after 1 min:  $(rss)"
sleep $(( minutes * 60 - 65 ))
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "RSS after $((minutes * 60 - 5)) s: $(rss)"
wait "$pid"
python3 - "$work/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
print(f"{s['requests']} requests in {s['duration_s']:.0f} s, {len(r['timeline'])} timeline rows, "
      f"p99 {s['latency']['p99_us']} µs, errors {s['errors']} {r['errors']}, "
      f"generator {r['generator']['utilization'] * 100:.0f}% busy")
PY

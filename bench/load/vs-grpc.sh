#!/usr/bin/env bash
# stackbench load vs h2load on gRPC unary calls with the same body, side by side in
# one run. The server is sb-bubble-sort (tonic) on core 0, called with an empty
# `List` (5 bytes framed), so the sort costs nothing and the call's HTTP/2 and gRPC
# work is what both sides pay. Each generator runs on core 1 with one thread, 100
# connections, 1 stream each, for DURATION; the figure of merit is calls completed
# per CPU-second (user + system) of the generator process. h2load checks only the
# HTTP status; stackbench load decodes every answer's message and grpc-status.
#
# Usage: bench/load/vs-grpc.sh [ROUNDS] [DURATION]      (defaults: 5 rounds, 10s)
# Needs: nghttp2-client (h2load) and `cargo build --release`.
# SB_IO=io_uring runs stackbench with --io io_uring.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/load/common.sh
rounds=${1:-5}
duration=${2:-10s}
secs=${duration%s}
target=${CARGO_TARGET_DIR:-target}/release
io=${SB_IO:-epoll}
for tool in h2load taskset python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y nghttp2-client" >&2; exit 1; }
done
for bin in stackbench sb-bubble-sort; do
  [ -x "$target/$bin" ] || { echo "no $target/$bin: cargo build --release" >&2; exit 1; }
done

work=$(mktemp -d)
port=18382
taskset -c 0 "$target/sb-bubble-sort" --port "$port" --sort textbook >"$work/server.out" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
url="http://127.0.0.1:$port"
method=sort.v1.SortService/BubbleSort
# The empty List, gRPC-framed: not compressed, length 0.
printf '\x00\x00\x00\x00\x00' >"$work/empty.bin"
for _ in $(seq 50); do
  "$target/stackbench" load "$url" --proto proto/sort/v1/sort.proto --call "$method" --data '{}' -n 1 -q \
    >/dev/null 2>&1 && break
  sleep 0.1
done


echo "# $(date -u +%FT%TZ) $(uname -r); sb-bubble-sort (tonic) on core 0; generators on core 1, 1 thread, -c 100, $duration, stackbench --io $io"
printf '%-5s %14s %14s %14s %14s %8s\n' round h2load_calls h2load/cpu sb_calls sb/cpu ratio
ratios=()
for round in $(seq "$rounds"); do
  cpu_of "$work/h2l" taskset -c 1 h2load -D "$secs" -c 100 -m 1 -t 1 -d "$work/empty.bin" \
    -H 'content-type: application/grpc' -H 'te: trailers' "$url/$method"
  h2_ok=$(grep -oE '[0-9]+ succeeded' "$work/h2l.stdout" | grep -oE '[0-9]+')
  cpu_of "$work/sb" taskset -c 1 "$target/stackbench" load "$url" --proto proto/sort/v1/sort.proto \
    --call "$method" --data '{}' --io "$io" -c 100 -d "$duration" --threads 1 -q --json "$work/sb.json"
  line=$(python3 - "$work/h2l" "$h2_ok" "$work/sb" "$work/sb.json" <<'PY'
import json, sys
def cpu(p): u, s = open(p).read().split(); return float(u) + float(s)
r = json.load(open(sys.argv[4]))["summary"]
if r["errors"]:
    sys.exit(f"stackbench load: {r['errors']} errors")
sb_ok = r["requests"] - r["errors"]
a, b = int(sys.argv[2]) / cpu(sys.argv[1]), sb_ok / cpu(sys.argv[3])
print(f"{sys.argv[2]} {a:.0f} {sb_ok} {b:.0f} {b / a:.3f}")
PY
)
  read -r ar arc br brc ratio <<<"$line"
  printf '%-5s %14s %14s %14s %14s %8s\n' "$round" "$ar" "$arc" "$br" "$brc" "$ratio"
  ratios+=("$ratio")
done
python3 - "${ratios[*]}" <<'PY'
import statistics, sys
v = sorted(float(x) for x in sys.argv[1].split())
print(f"gRPC: stackbench calls per generator CPU-second / h2load's = median {statistics.median(v):.2f} "
      f"(min {v[0]:.2f}, max {v[-1]:.2f}, {len(v)} rounds)")
PY
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

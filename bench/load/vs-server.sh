#!/usr/bin/env bash
# What a request costs the load engine against what it costs the fastest server it
# measures: `sb-dummy --stack hyper` (the `dummy` scenario on hyper) pinned to core 0,
# `stackbench load --scenario dummy` on core 1 at a fixed open-model rate, both
# processes' CPU time (user + system) over the same 10 s read from /proc. A ratio under
# 1 means a 1-core-to-1-core benchmark saturates the server before the generator.
#
# Usage: bench/load/vs-server.sh [ROUNDS] [RATES...]   (defaults: 3 rounds; 20000 40000)
# Needs: `cargo build --release`.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
shift || true
rates=("${@:-20000 40000}")
read -r -a rates <<<"${rates[*]}"
target=${CARGO_TARGET_DIR:-target}/release
for bin in stackbench sb-dummy; do
  [ -x "$target/$bin" ] || { echo "no $target/$bin: cargo build --release" >&2; exit 1; }
done
work=$(mktemp -d)
taskset -c 0 "$target/sb-dummy" --stack hyper --port 0 >"$work/server.out" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do grep -q 'http://' "$work/server.out" && break; sleep 0.1; done
addr=$(grep -oE 'http://[0-9.:]+' "$work/server.out" | head -1)
ticks=$(getconf CLK_TCK)
# cpu_s PID: user + system CPU seconds of a process so far.
cpu_s() { awk -v t="$ticks" '{print ($14 + $15) / t}' "/proc/$1/stat"; }

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) cores; sb-dummy --stack hyper on core 0, the load on core 1, 10 s each"
printf '%-6s %-8s %10s %8s %18s %18s %8s\n' round rate requests errors 'server µs CPU/req' 'load µs CPU/req' ratio
: >"$work/ratios"
for round in $(seq "$rounds"); do
  for rate in "${rates[@]}"; do
    before=$(cpu_s "$server")
    taskset -c 1 "$target/stackbench" load "$addr/events" --scenario dummy --rate "$rate" -d 10s --threads 1 -q \
      --json "$work/r.json" >/dev/null
    after=$(cpu_s "$server")
    python3 - "$work/r.json" "$before" "$after" "$round" "$rate" "$work/ratios" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n, errors = r["summary"]["requests"], r["summary"]["errors"]
g = r["generator"]
# The server's CPU over the whole load (warm-up is 0 here), the generator's over the measured run.
server = (float(sys.argv[3]) - float(sys.argv[2])) / n * 1e6
load = (g["cpu_user_s"] + g["cpu_system_s"]) / n * 1e6
print(f"{sys.argv[4]:<6} {sys.argv[5]:<8} {n:>10} {errors:>8} {server:>18.2f} {load:>18.2f} {load / server:>8.2f}")
open(sys.argv[6], "a").write(f"{sys.argv[5]} {load / server}\n")
PY
  done
done
python3 - "$work/ratios" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    rate, x = line.split()
    by.setdefault(rate, []).append(float(x))
for rate, v in by.items():
    v.sort()
    print(f"at {rate} req/s: the load engine's CPU per request / the server's = median {statistics.median(v):.2f} "
          f"(min {v[0]:.2f}, max {v[-1]:.2f}, {len(v)} rounds)")
PY

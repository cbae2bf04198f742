#!/usr/bin/env bash
# What a request costs the load engine against what it costs the fastest server it
# measures: `sb-dummy --stack hyper` (the `dummy` scenario on hyper) pinned to core 0,
# the client on core 1 at a fixed open-model rate, both processes' CPU time (user +
# system) over the same 10 s read from /proc. A ratio under 1 means a 1-core-to-1-core
# benchmark saturates the server before the generator. Two clients, in turn:
#
#   stackbench   stackbench load --scenario dummy --rate R
#   floor        crates/load/examples/floor.rs at the same rate: one epoll_pwait2 per
#                wake-up, one send and one recv per request, nothing else; what the
#                kernel makes any open-model client pay (it sends one fixed dummy event)
#
# SLACKS="0 1ms" runs each rate again with those `--timer-slack` values (one wake-up
# starts every request due within the slack; the wait counts as latency), the floor
# with the same grid; SB_IO=io_uring runs stackbench with --io io_uring. BASE=PATH runs a
# second stackbench binary (another build, say) as client `base` in every round too, so two
# builds are compared side by side.
#
# Usage: [SLACKS="0 ..."] bench/load/vs-server.sh [ROUNDS] [RATES...]   (defaults: 3 rounds; 20000 40000; slack 0)
# Needs: `cargo build --release --workspace --bins --examples`.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
shift || true
rates=("${@:-20000 40000}")
read -r -a rates <<<"${rates[*]}"
read -r -a slacks <<<"${SLACKS:-0}"
io=${SB_IO:-epoll}
target=${CARGO_TARGET_DIR:-target}/release
for bin in stackbench sb-dummy examples/floor; do
  [ -x "$target/$bin" ] || { echo "no $target/$bin: cargo build --release --workspace --bins --examples" >&2; exit 1; }
done
# micros DUR: 0, 500us, 1ms, 2.5ms -> microseconds (the floor's SLACK_US); fails on anything else.
micros() { python3 -c 'import re,sys; m=re.fullmatch(r"0|([0-9.]+)(us|ms|s)", sys.argv[1]); sys.exit(1) if m is None else print(0 if m[1] is None else round(float(m[1]) * {"us": 1, "ms": 1e3, "s": 1e6}[m[2]]))' "$1"; }
for slack in "${slacks[@]}"; do
  micros "$slack" >/dev/null || { echo "SLACKS: $slack is not 0 or a duration like 200us, 1ms" >&2; exit 2; }
done
work=$(mktemp -d)
taskset -c 0 "$target/sb-dummy" --stack hyper --port 0 >"$work/server.out" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do grep -q 'http://' "$work/server.out" && break; sleep 0.1; done
addr=$(grep -oE 'http://[0-9.:]+' "$work/server.out" | head -1)
hostport=${addr#http://}
body='{"type":"click","source":"web","value":1.5,"timestamp":1700000000000}'
printf 'POST /events HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
  "$hostport" "${#body}" "$body" >"$work/request"
ticks=$(getconf CLK_TCK)
# cpu_s PID: user + system CPU seconds of a process so far.
cpu_s() { awk -v t="$ticks" '{print ($14 + $15) / t}' "/proc/$1/stat"; }

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) cores; sb-dummy --stack hyper on core 0, the client on core 1 (stackbench --io $io), 10 s each"
printf '%-6s %-8s %-6s %-11s %10s %8s %18s %18s %8s %9s\n' round rate slack client requests errors \
  'server µs CPU/req' 'client µs CPU/req' ratio 'p50 µs'
: >"$work/ratios"
for round in $(seq "$rounds"); do
  for rate in "${rates[@]}"; do
    for slack in "${slacks[@]}"; do
      extra=()
      [ "$slack" = 0 ] || extra=(--timer-slack "$slack")
      clients=(stackbench)
      [ -z "${BASE:-}" ] || clients+=(base)
      for client in "${clients[@]}"; do
        bin=$target/stackbench
        [ "$client" = base ] && bin=$BASE
        before=$(cpu_s "$server")
        taskset -c 1 "$bin" load "$addr/events" --scenario dummy --rate "$rate" -d 10s --threads 1 -q \
          --io "$io" "${extra[@]}" --json "$work/r.json" >/dev/null
        after=$(cpu_s "$server")
        python3 - "$work/r.json" "$before" "$after" "$round" "$rate" "$slack" "$client" >>"$work/rows" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n, errors = r["summary"]["requests"], r["summary"]["errors"]
g = r["generator"]
# The server's CPU over the whole load (warm-up is 0 here), the generator's over the measured run.
server = (float(sys.argv[3]) - float(sys.argv[2])) / n * 1e6
load = (g["cpu_user_s"] + g["cpu_system_s"]) / n * 1e6
print(sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7], n, errors, server, load, r["summary"]["latency"]["p50_us"])
PY
      done
      before=$(cpu_s "$server")
      out=$(taskset -c 1 "$target/examples/floor" "$hostport" 100 10 "$rate" "$(micros "$slack")" "$work/request")
      after=$(cpu_s "$server")
      # "requests N user_s U system_s S late L"
      read -r _ n _ user _ system _ late <<<"$out"
      python3 -c 'import sys; a = sys.argv; n = int(a[5]); print(*a[1:4], "floor", n, a[6], (float(a[8]) - float(a[7])) / n * 1e6, (float(a[9]) + float(a[10])) / n * 1e6, "-")' \
        "$round" "$rate" "$slack" x "$n" "$late" "$before" "$after" "$user" "$system" >>"$work/rows"
      tail -$(( ${#clients[@]} + 1 )) "$work/rows" | while read -r ro ra sl cl n e sv ld p50; do
        printf '%-6s %-8s %-6s %-11s %10s %8s %18.2f %18.2f %8.2f %9s\n' "$ro" "$ra" "$sl" "$cl" "$n" "$e" "$sv" "$ld" \
          "$(python3 -c "print($ld / $sv)")" "$p50"
      done
    done
  done
done
python3 - "$work/rows" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    _, rate, slack, client, n, errors, server, load, _ = line.split()
    by.setdefault((rate, slack, client), []).append(float(load) / float(server))
for (rate, slack, client), v in by.items():
    v = sorted(v)
    print(f"at {rate} req/s, timer slack {slack}, {client}: client CPU per request / the server's = median "
          f"{statistics.median(v):.2f} (min {v[0]:.2f}, max {v[-1]:.2f}, {len(v)} rounds)")
# stackbench against the other clients, round by round: the ratio of their ratios above (each
# client's CPU per request over the server's in its own run, so the server's drift cancels).
for (rate, slack, client), v in by.items():
    if client == "stackbench":
        continue
    r = sorted(a / b for a, b in zip(by[(rate, slack, "stackbench")], v))
    print(f"at {rate} req/s, timer slack {slack}: stackbench's ratio / {client}'s = median "
          f"{statistics.median(r):.2f} (min {r[0]:.2f}, max {r[-1]:.2f})")
PY

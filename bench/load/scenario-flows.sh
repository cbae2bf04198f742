#!/usr/bin/env bash
# How the time to load a scenario file grows with its flows: files of N, 2N and 4N
# `[[flow]]`s of one inline request each (default N = 10,000), each loaded by `stackbench
# load` against a port where nothing listens (the file is loaded and checked, then the run
# stops at its first connection). Prints the user CPU seconds of each and each ratio to the
# one before: 2 is linear, 4 quadratic. Exits 1 when a ratio is over 3.
#
# Usage: cargo build --release && bench/load/scenario-flows.sh [N]
# SB=path/to/stackbench to measure another build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sb=${SB:-$here/../../target/release/stackbench}
n=${1:-10000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# A port nothing listens on: bound, then closed.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
before=""
for flows in "$n" $((2 * n)) $((4 * n)); do
  file="$dir/flows-$flows.toml"
  python3 - "$flows" "$file" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    for i in range(n):
        f.write(f'[[flow]]\nname = "f{i}"\nhurl = "GET {{{{base_url}}}}/x/{i}\\nHTTP 200\\n"\n')
PY
  /usr/bin/time -f '%U' "$sb" load "http://127.0.0.1:$port" --scenario-file "$file" -n 1 -q \
    >/dev/null 2>"$dir/err" || true
  secs=$(tail -1 "$dir/err")
  grep -q "cannot connect" "$dir/err" || { cat "$dir/err"; echo "the file did not load"; exit 1; }
  if [ -n "$before" ]; then
    ratio=$(python3 -c "print(f'{max($secs, 0.01) / max($before, 0.01):.2f}')")
    printf '%6d flows  %6.2f s  x%s\n' "$flows" "$secs" "$ratio"
    python3 -c "import sys; sys.exit(0 if $ratio <= 3 else 1)" || { echo "worse than linear"; exit 1; }
  else
    printf '%6d flows  %6.2f s\n' "$flows" "$secs"
  fi
  before=$secs
done

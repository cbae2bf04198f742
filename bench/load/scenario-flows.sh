#!/usr/bin/env bash
# How the time to load a scenario file grows with its flows: files of N, 2N and 4N
# `[[flow]]`s of one inline request each (default N = 20,000), each loaded by `stackbench
# load` against a port where nothing listens (the file is loaded and checked, then the run
# stops at its first connection). Prints the CPU seconds (user + system, the best of three
# runs) of each and each ratio to the one before: 2 is linear, 4 quadratic. Exits 1 when a
# ratio is over 3.
#
# Usage: cargo build --release && bench/load/scenario-flows.sh [N]
# SB=path/to/stackbench to measure another build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sb=${SB:-$here/../../target/release/stackbench}
n=${1:-20000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$sb" "$n" "$dir" <<'PY'
import os, resource, socket, subprocess, sys
sb, n, dir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# A port nothing listens on: bound, then closed.
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()

def cpu_seconds(path):
    """CPU seconds (user + system) of one load of the file, and what it said."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sb, "load", f"http://127.0.0.1:{port}", "--scenario-file", path, "-n", "1", "-q"],
                         capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, out.stderr

before = None
for flows in (n, 2 * n, 4 * n):
    path = os.path.join(dir, f"flows-{flows}.toml")
    with open(path, "w") as f:
        for i in range(flows):
            f.write(f'[[flow]]\nname = "f{i}"\nhurl = "GET {{{{base_url}}}}/x/{i}\\nHTTP 200\\n"\n')
    runs = [cpu_seconds(path) for _ in range(3)]
    if not all("cannot connect" in said for _, said in runs):
        sys.exit(f"the file did not load: {runs[0][1]}")
    secs = min(t for t, _ in runs)
    ratio = "" if before is None else f"  x{secs / before:.2f}"
    print(f"{flows:7d} flows  {secs:7.3f} s{ratio}")
    if before is not None and secs / before > 3:
        sys.exit("worse than linear")
    before = secs
PY

#!/usr/bin/env python3
"""A/B of two builds of a contestant under the dummy benchmark's load, bracketed.

Runs A, B, A, B, ..., A (server pinned to core 0, `wrk -t1 -c64` POST of one event pinned to core 1,
2 s warm-up before each run) and compares each B run with the mean of the A runs just before and
after it, so the shared machine's drift cancels to first order. This is how a change to the serving
code is judged (the README's "1.08x", "1.06x" figures): build the code before and after the change,
then compare the two binaries.

  git worktree add /tmp/before REV
  (cd /tmp/before && cargo build --release -p stackbench-serve --bin sb-dummy)
  cargo build --release -p stackbench-serve --bin sb-dummy
  bench/event-log/ab.py "/tmp/before/target/release/sb-dummy --stack hyper" \\
                        "target/release/sb-dummy --stack hyper" --reps 6 --duration 5

Each command is a server that takes `--port 0` and prints its address on its first line (the sb-*
binaries do). Prints one line per pair and the median (min..max) of B/A.
"""

import argparse
import os
import shlex
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the dummy benchmark's processes and wrk runner)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("a", help="command of the baseline server (without --port)")
    p.add_argument("b", help="command of the server being judged (without --port)")
    p.add_argument("--reps", type=int, default=6, help="B runs, each between two A runs")
    p.add_argument("--duration", type=int, default=5, help="seconds per measured run")
    p.add_argument("--connections", type=int, default=64)
    args = p.parse_args()
    bench.need("wrk")
    bench.need("taskset")
    if args.reps < 1 or args.duration < 1:
        sys.exit("--reps and --duration must be at least 1")
    with tempfile.TemporaryDirectory(prefix="sb-ab-") as tmp:
        script = bench.lua_script(tmp)

        def measure(command):
            server = bench.Contestant(shlex.split(command))
            bench.wrk(server.url, script, args.connections, 2)  # warm-up
            rps = bench.wrk(server.url, script, args.connections, args.duration)["rps"]
            server.stop()
            return rps

        ratios = []
        before = measure(args.a)
        for _ in range(args.reps):
            b = measure(args.b)
            after = measure(args.a)
            ratios.append(b / ((before + after) / 2))
            print(f"  A {before:,.0f}  B {b:,.0f}  A {after:,.0f} req/s  B/A {ratios[-1]:.3f}", flush=True)
            before = after
    mid = statistics.median(ratios)
    print(f"B/A median {mid:.3f} ({min(ratios):.3f}..{max(ratios):.3f}) over {args.reps} bracketed runs "
          f"(server core {bench.SERVER_CPU}, wrk core {bench.LOAD_CPU}, -c{args.connections}, {args.duration} s)")


if __name__ == "__main__":
    main()

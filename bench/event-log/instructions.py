#!/usr/bin/env python3
"""User-space instructions per request of one or more servers under the dummy benchmark's load.

Throughput on a shared 2-core VM drifts by ±25% between minutes, so a change worth 2-5% of a
server's CPU is hard to see in requests/s even bracketed (ab.py). Instructions counted by valgrind's
callgrind are not: the same binary under the same load gives the same count to a fraction of a
percent whatever else the machine does. They cover user space only (the kernel's TCP work, most of
the cost here, is not in them), which is where the code of a contestant lives.

For each command: one run with no load (start-up and shutdown), then one under `wrk -t1 -c64` POST
of one event for --duration seconds; instructions per request = (loaded - idle) / requests wrk
completed. The server runs under callgrind pinned to core 0 (so a tokio server uses its
current-thread runtime, as in the benchmark), wrk on core 1. Under callgrind a server is about 50x
slower, so each connection finds more requests ready per wake-up than at full speed: compare counts
with each other, not with a native profile.

  bench/event-log/instructions.py "/tmp/before/sb-dummy --stack hyper" "target/release/sb-dummy --stack hyper"
  bench/event-log/instructions.py nginx "target/release/sb-dummy --stack hyper"

Each command is a server that takes `--port 0` and prints its address on its first line, or `nginx`:
the dummy benchmark's nginx `return 200`, run without its master process so that callgrind counts
the one process that serves. Prints one line per run and a table: instructions per request, and the
ratio to the first command.
"""

import argparse
import os
import shlex
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the dummy benchmark's servers, wrk runner and POST body)


NGINX = "nginx"


def callgrind_run(command, tmp, run, script, connections, duration):
    """Instructions (Ir) of one run of `command` under callgrind, and the requests wrk completed.

    The servers are the dummy benchmark's own (bench.Contestant, bench.Nginx with no master
    process), started under valgrind; the count is the `totals:` line of callgrind's output file,
    written when the server exits on the stop signal."""
    out_file = os.path.join(tmp, f"callgrind.{run}.out")
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", "--"]
    if command == NGINX:
        server = bench.Nginx(tmp, master=False, wrap=valgrind).start()
    else:
        server = bench.Contestant(valgrind + shlex.split(command))
    requests = bench.wrk(server.url, script, connections, duration)["requests"] if duration else 0
    server.stop()
    try:
        with open(out_file) as f:
            totals = [line for line in f if line.startswith("totals:")]
    except FileNotFoundError:
        totals = []
    if not totals:
        sys.exit(f"callgrind gave no instruction count for {command} (it must exit on its stop signal)")
    return int(totals[-1].split()[1]), requests


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("commands", nargs="+",
                   help="server commands (without --port), or `nginx` for the dummy benchmark's nginx `return 200`; "
                        "the first is the baseline")
    p.add_argument("--duration", type=int, default=8, help="seconds of load per measured run")
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--reps", type=int, default=2, help="loaded runs per command (the median is reported)")
    args = p.parse_args()
    for tool in ["valgrind", "wrk", "taskset"] + (["nginx"] if NGINX in args.commands else []):
        bench.need(tool)
    if args.reps < 1 or args.duration < 1:
        sys.exit("--reps and --duration must be at least 1")
    per_request = {}
    with tempfile.TemporaryDirectory(prefix="sb-instr-") as tmp:
        script = bench.lua_script(tmp)
        for command in args.commands:
            idle, _ = callgrind_run(command, tmp, f"{len(per_request)}-idle", script, args.connections, 0)
            runs = []
            for rep in range(args.reps):
                total, requests = callgrind_run(command, tmp, f"{len(per_request)}-{rep}", script,
                                                args.connections, args.duration)
                if requests == 0:
                    sys.exit(f"{command}: wrk completed no request under callgrind")
                runs.append((total - idle) / requests)
                print(f"  {command}: {requests:,} requests, {runs[-1]:,.0f} instructions per request "
                      f"(idle run {idle:,})", flush=True)
            per_request[command] = statistics.median(runs)
    base = per_request[args.commands[0]]
    print(f"\n`wrk -t1 -c{args.connections} -d{args.duration}s` POST of one event; server under callgrind on core "
          f"{bench.SERVER_CPU}, wrk on core {bench.LOAD_CPU}; user-space instructions per request, median of "
          f"{args.reps}.\n")
    print("| server | instructions per request | ratio to the first |")
    print("|---|---:|---:|")
    for command, n in per_request.items():
        print(f"| `{command}` | {n:,.0f} | {n / base:.3f} |")


if __name__ == "__main__":
    main()

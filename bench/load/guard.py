#!/usr/bin/env python3
"""The load engine's hot paths, guarded: user-space instructions per request under callgrind.

Each path is `stackbench load` with 10 connections on one worker thread against a local server,
the client under `valgrind --tool=callgrind` on core 1, the server on core 0:

  http1  a fixed GET over HTTP/1.1                 nginx `return 200 '{"count":1}'`
  h2c    the same over h2c (`--http2`)             nginx's h2c port
  grpc   a gRPC unary call (`--proto --call`)      sb-bubble-sort (tonic), an empty `List`
  hurl   bench/load/dummy-like.hurl: a template,   nginx
         a capture and three asserts, every answer checked (`--check-every 1`)
  open   the open model, `--rate 400`              nginx

The window is a request count, not a time: each path runs `-n SHORT` and `-n LONG` requests, and
(Ir_long - Ir_short) / (LONG - SHORT) takes start-up, connections and exit out. Only the worker
thread is counted: the main thread's collector and record work per second and per run, and
under callgrind, fifty times slower, a second holds fifty times fewer requests to share them.
nginx runs with its clock stopped (libfaketime), so its answers carry one `date` and an h2c head
is the same block throughout, as within a second of a native run. What still moves a count is
timing: how many answers one wake-up finds ready; a loaded machine moves a path by a percent or
so (docs/benchmarks.md gives the spread measured), so each path is measured --reps times and
its median compared.

The committed baseline, bench/load/guard-baseline.toml, holds each path's count; with --check
the runner exits 1 when a path's median is more than --limit (3%) above it, after measuring
that path twice more. The baseline moves only in a commit that says why (the rule is in the
file). `cargo bench` runs this (crates/cli/benches/hot_paths.rs), and .ci/run with --check.

  bench/load/guard.py                        # every path 3 times, against the baseline
  bench/load/guard.py --check                # the same, exit 1 on a rise past the limit (CI)
  bench/load/guard.py --base /tmp/old/stackbench   # another build too, interleaved
  bench/load/guard.py --base floor=/tmp/a/stackbench --base fat=/tmp/b/stackbench   # several
  bench/load/guard.py --write-baseline       # set the baseline to this build's medians
  bench/load/guard.py --keep DIR             # keep callgrind's files (for callgrind_annotate)

Needs valgrind, nginx (Debian nginx-light), libfaketime (Debian faketime), taskset, and
`cargo build --release -p stackbench -p stackbench-serve --bin stackbench --bin sb-bubble-sort`;
STACKBENCH and SB_BUBBLE_SORT name other binaries.
"""

import argparse
import glob
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BASELINE = os.path.join(HERE, "guard-baseline.toml")
PROTO = os.path.join(ROOT, "proto", "sort", "v1", "sort.proto")
GRPC_METHOD = "sort.v1.SortService/BubbleSort"
CONNECTIONS = 10
# The open model's rate: low enough that callgrind's client keeps up on a loaded 2-core machine
# (each request then is its own timer wake-up, as at a moderate rate natively).
OPEN_RATE = 400

# name -> (server, SHORT, LONG, extra arguments)
PATHS = {
    "http1": ("nginx", 1000, 5000, []),
    "h2c": ("nginx-h2c", 1000, 5000, ["--http2"]),
    "grpc": ("bubble", 1000, 5000, ["--proto", PROTO, "--call", GRPC_METHOD, "--data", "{}"]),
    "hurl": ("nginx", 1000, 5000,
             ["--scenario-file", os.path.join(HERE, "dummy-like.hurl"), "--check-every", "1"]),
    "open": ("nginx", 400, 2400, ["--rate", str(OPEN_RATE)]),
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def faketime():
    """Debian's libfaketime (package faketime)."""
    found = glob.glob("/usr/lib/*/faketime/libfaketime.so.1")
    if not found:
        sys.exit("missing libfaketime: apt-get install -y faketime")
    return found[0]


def cores():
    """(server core, client core): 0 and 1 when there are two, else no pinning."""
    return (["taskset", "-c", "0"], ["taskset", "-c", "1"]) if (os.cpu_count() or 1) >= 2 else ([], [])


class Servers:
    """nginx (bench/load/common.sh's, HTTP/1.1 and h2c) and sb-bubble-sort, started once."""

    def __init__(self, tmp, bubble):
        self.tmp, self.urls, self.procs = tmp, {}, []
        h1, h2 = free_port(), free_port()
        # nginx's clock stands still (libfaketime), so every answer carries the same `date` and
        # an h2c head is the same block throughout, as within one second of a native run. With
        # a clock that runs, each new `date` makes every connection decode its next twenty heads
        # in full: per second, not per request, and callgrind's slowdown fits fifty times fewer
        # requests in a second, so a run would count 300 instructions per request more or less
        # with where its seconds begin.
        # (nginx's workers drop the environment, so libfaketime must not look at it again: its
        # cache of it lasts the day.)
        frozen = dict(os.environ, LD_PRELOAD=faketime(), FAKETIME="2026-12-01 00:00:00",
                      FAKETIME_DONT_FAKE_MONOTONIC="1", FAKETIME_CACHE_DURATION="86400")
        subprocess.run(["bash", "-c", f'. "{HERE}/common.sh" && start_nginx "$1" {h1} {h2}', "-", tmp],
                       check=True, stdout=subprocess.DEVNULL, env=frozen)
        self.urls["nginx"] = f"http://127.0.0.1:{h1}/"
        self.urls["nginx-h2c"] = f"http://127.0.0.1:{h2}/"
        server_core, _ = cores()
        p = subprocess.Popen(server_core + [bubble, "--port", "0", "--sort", "textbook"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.procs.append(p)
        first = p.stdout.readline()
        m = re.search(r"listening on (http://\S+?);", first)
        if not m:
            self.stop()
            sys.exit(f"sb-bubble-sort did not say where it listens: {first!r}")
        self.urls["bubble"] = m.group(1)

    def stop(self):
        for p in self.procs:
            p.terminate()
            p.wait()
        try:
            with open(os.path.join(self.tmp, "nginx.pid")) as f:
                os.kill(int(f.read().strip()), 15)
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass


def callgrind(sb, url, n, extra, out):
    """Ir of the worker thread of one `stackbench load` of `n` requests under callgrind, and the
    run's requests and errors. With `--threads 1` the worker is the busiest thread but the main
    one (callgrind numbers threads as they start; the main thread is 1): the main thread's
    collector and record are per second and per run, not per request, and callgrind's slowdown
    would weigh them fifty times their native share."""
    _, client_core = cores()
    cmd = client_core + ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={out}.cg",
                         sb, "load", url, "-c", str(CONNECTIONS), "--threads", "1", "-n", str(n), "-q",
                         "--json", f"{out}.json"] + extra
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    threads = {}
    for name in glob.glob(f"{out}.cg-*"):
        with open(name) as f:
            threads[int(name.rsplit("-", 1)[1])] = next(
                int(line.split()[1]) for line in f if line.startswith(("summary:", "totals:")))
    others = {t: ir for t, ir in threads.items() if t != 1}
    if not others:
        sys.exit(f"callgrind wrote no thread but the main one for {' '.join(cmd)}")
    with open(f"{out}.json") as f:
        summary = json.load(f)["summary"]
    return max(others.values()), summary["requests"], summary["errors"]


def per_request(sb, url, path, tmp, tag):
    """Instructions per request of one path: (Ir_long - Ir_short) / (requests_long - requests_short)."""
    _, short, long, extra = PATHS[path]
    runs = []
    for n in (short, long):
        ir, requests, errors = callgrind(sb, url, n, extra, os.path.join(tmp, f"{tag}.{path}.{n}"))
        if errors or requests != n:
            sys.exit(f"{path}: {requests} requests with {errors} errors for -n {n}: the path measures a "
                     f"failure, not the engine (is the server up? see {tmp})")
        runs.append((ir, requests))
    (ir1, n1), (ir2, n2) = runs
    return (ir2 - ir1) / (n2 - n1)


def load_baseline():
    with open(BASELINE, "rb") as f:
        return tomllib.load(f)


def write_baseline(medians):
    """Sets each measured path's count in the baseline file, keeping its comments."""
    with open(BASELINE) as f:
        text = f.read()
    for path, value in medians.items():
        line = f"{path} = {round(value)}"
        text, n = re.subn(rf"(?m)^{path} = \d+$", line, text)
        if n == 0:
            text = text.rstrip("\n") + f"\n{line}\n"
    with open(BASELINE, "w") as f:
        f.write(text)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    p.add_argument("--stackbench", default=os.environ.get("STACKBENCH", os.path.join(target, "release", "stackbench")))
    p.add_argument("--bubble", default=os.environ.get("SB_BUBBLE_SORT", os.path.join(target, "release", "sb-bubble-sort")))
    p.add_argument("--base", action="append", default=[], metavar="[NAME=]PATH",
                   help="another stackbench build, measured in the same run (interleaved); may be repeated")
    p.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated, of {', '.join(PATHS)}")
    p.add_argument("--reps", type=int, default=3, help="measurements of each path, the median compared (default 3)")
    p.add_argument("--check", action="store_true", help="exit 1 when a path is past --limit above its baseline")
    p.add_argument("--limit", type=float, default=3.0, help="percent above the baseline that fails (default 3)")
    p.add_argument("--write-baseline", action="store_true", help="set the baseline to this build's medians")
    p.add_argument("--keep", help="keep callgrind's output files in this directory")
    args, _ = p.parse_known_args()  # `cargo bench` adds `--bench`
    args.paths = [x for x in args.paths.split(",") if x]
    unknown = [x for x in args.paths if x not in PATHS]
    if unknown or args.reps < 1:
        sys.exit(f"--paths takes {', '.join(PATHS)} (got {', '.join(unknown)}); --reps at least 1")
    for tool in ("valgrind", "nginx", "taskset", "bash"):
        if not shutil.which(tool):
            sys.exit(f"missing {tool}: apt-get install -y valgrind nginx-light faketime util-linux")
    args.builds = [("stackbench", args.stackbench)] + [base_build(i, x) for i, x in enumerate(args.base)]
    names = [name for name, _ in args.builds]
    if len(set(names)) != len(names):
        sys.exit(f"--base: each build needs a name of its own (got {', '.join(names)}); write NAME=PATH")
    for name, binary in args.builds + [("sb-bubble-sort", args.bubble)]:
        if not os.access(binary, os.X_OK):
            sys.exit(f"no {name} binary at {binary}: cargo build --release -p stackbench -p stackbench-serve "
                     f"--bin stackbench --bin sb-bubble-sort")
    return args


def base_build(i, spec):
    """(name, path) of one --base: `NAME=PATH`, or a bare PATH named base (base2, ... after it)."""
    name, sep, path = spec.partition("=")
    if sep and name and "/" not in name:
        return name, path
    return ("base" if i == 0 else f"base{i + 1}"), spec


def over(baseline, results, limit):
    """The paths whose median is more than `limit` percent above their baseline."""
    return [x for x, v in results.items() if x in baseline and statistics.median(v) > baseline[x] * (1 + limit / 100)]


def table(args, results, baseline):
    bases = [name for name, _ in args.builds[1:]]
    print(f"\n{'path':<6} {'median':>9} {'min..max':>19} {'spread':>7} {'baseline':>9} {'vs baseline':>12}"
          + "".join(f" {name:>9} {'/ ' + name:>{max(7, len(name) + 2)}}" for name in bases))
    for x in args.paths:
        v = results[("stackbench", x)]
        m = statistics.median(v)
        line = f"{x:<6} {m:9.0f} {min(v):9.0f}..{max(v):<9.0f} {(max(v) - min(v)) / m * 100:6.2f}%"
        line += f" {baseline[x]:9d} {(m / baseline[x] - 1) * 100:+11.2f}%" if x in baseline else f" {'-':>9} {'-':>12}"
        for name in bases:
            b = statistics.median(results[(name, x)])
            line += f" {b:9.0f} {m / b:{max(7, len(name) + 2)}.3f}"
        print(line)


def main():
    args = parse_args()
    tmp = args.keep or tempfile.mkdtemp(prefix="sb-guard-")
    os.makedirs(tmp, exist_ok=True)
    started = time.monotonic()
    print(f"# {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {os.uname().release}, {os.cpu_count()} cores, "
          f"load average at start {os.getloadavg()[0]:.2f}; user-space instructions per request of the worker "
          f"thread, -c {CONNECTIONS} --threads 1, client under callgrind on core 1, servers on core 0", flush=True)
    baseline = load_baseline()["paths"]
    servers = Servers(tmp, args.bubble)
    results = {(b, x): [] for b, _ in args.builds for x in args.paths}

    def ours():
        return {x: results[("stackbench", x)] for x in args.paths}

    def measure(rep, paths, builds):
        for path in paths:
            for name, binary in builds:
                v = per_request(binary, servers.urls[PATHS[path][0]], path, tmp, f"{name}.{rep}")
                results[(name, path)].append(v)
                print(f"  rep {rep + 1}  {path:<6} {name:<10} {v:9.1f}", flush=True)

    try:
        for rep in range(args.reps):
            measure(rep, args.paths, args.builds)
        # A path past the limit is measured twice more before it fails: a loaded machine moves a
        # count by a percent or two (wake-ups that find more or fewer answers ready), a real
        # rise stays.
        suspects = over(baseline, ours(), args.limit) if args.check else []
        for rep in range(args.reps, args.reps + 2 if suspects else args.reps):
            measure(rep, suspects, args.builds[:1])
    finally:
        servers.stop()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    table(args, results, baseline)
    print(f"# {time.monotonic() - started:.0f} s, load average at end {os.getloadavg()[0]:.2f}")
    if args.write_baseline:
        write_baseline({x: statistics.median(v) for x, v in ours().items()})
        print(f"# wrote {os.path.relpath(BASELINE, ROOT)}: commit it with the reason it moved")
    failed = over(baseline, ours(), args.limit)
    if failed:
        print("\n".join(["", f"instruction counts more than {args.limit:g}% above the baseline: {', '.join(failed)}",
                         "Find where with --keep DIR and callgrind_annotate on a `cargo build --profile profiling` "
                         "build; the baseline moves only in a commit that says why (bench/load/guard-baseline.toml)."]),
              file=sys.stderr)
        if args.check:
            sys.exit(1)


if __name__ == "__main__":
    main()

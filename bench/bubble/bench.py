#!/usr/bin/env python3
"""bubble-sort: the tonic contestant against the physical limit, and the original experiment's profile.

The contestant (sb-bubble-sort) runs pinned to core 0 (`taskset -c 0`); every load generator
runs pinned to core 1. Only 127.0.0.1. The anchor and the contestant alternate (limit, service,
limit, service, ..., limit) and each service run is compared with the mean of the limit runs just
before and after it, so the shared machine's drift cancels to first order; the report gives the
median and the spread (min..max) of the per-run ratios.

  limit   the physical limit of the scenario on one core: in-process bubble sorts of the original experiment's
          1000-number list per second (examples/bubble_limit.rs: copy the list, sort it with the
          service's own bubble_sort; nothing else). Also the textbook loop, for context.
  grpc    the service on core 0 under gRPC load from core 1 (keep-alive, 4 connections x 8
          streams = 32 calls in flight), with two generators: `stackbench load --scenario
          bubble-sort` (checks the answers) and h2load (nghttp2; -c4 -m8, the 5-byte-framed seed
          message as --data). Two ratios per run:
            throughput ratio = service calls/s / limit sorts/s            (the goal: >= 0.9)
            CPU ratio        = service calls per CPU-second of the server
                               / limit sorts per CPU-second               (immune to other
                               processes sharing core 0; CPU from /proc/PID/stat and wait4)
  size    the stripped size of sb-bubble-sort (the original experiment's "image size" column).
  seed    the original experiment's profile through the orchestrator: `stackbench run plans/bubble.toml
          [--variant short]` (250 users, 100 ms think time, a new connection per call, server
          limited to 1 CPU and 512 MiB by cgroups on core 0, 20 cold starts), printed in the original experiment's
          table layout side by side with the original experiment's published Rust, Go and Node rows (which ran on
          Cloud Run, 1 vCPU, 512 MiB; the k6 client on a separate 4-CPU job).

Usage: bench/bubble/bench.py [all|limit|grpc|size|seed ...] [--reps 5] [--duration 10]
                             [--seed-variant short|full] [--seed-out DIR] [--bin-dir DIR]
                             [--out FILE]
Without --bin-dir it runs `cargo build --release -p stackbench -p stackbench-serve --bin stackbench
--bin sb-bubble-sort --example bubble_limit` (into $CARGO_TARGET_DIR, else target/).
"""

import argparse
import glob
import json
import os
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER_CPU, LOAD_CPU = "0", "1"
GRPC_PATH = "/sort.v1.SortService/BubbleSort"
USER_HZ = os.sysconf("SC_CLK_TCK")
CONNECTIONS, STREAMS = 4, 8

# The original experiment's published results (seeds/003, README "Results"), Cloud Run, 1 vCPU, 512 MiB.
SEED_ROWS = {
    "Rust (seed)": {
        "grpc_req_duration": "avg=384.06ms min=7.3ms med=371.06ms max=1.12s p(90)=703.66ms p(95)=756.19ms",
        "iterations": "300960 501.256517/s",
        "image_size": "2.1MB",
        "cold_start": "p(50)=166.56ms p(95)=173.7ms p(99)=174.34ms",
        "memory_utilization": "p(50)=1.5% p(95)=1.95% p(99)=1.99%",
        "cpu_utilization": "p(50)=80.5% p(95)=80.95% p(99)=80.99%",
    },
    "Go (seed)": {
        "grpc_req_duration": "avg=565.12ms min=7.26ms med=540.23ms max=3.48s p(90)=1.05s p(95)=1.14s",
        "iterations": "221959 369.426767/s",
        "image_size": "3.2MB",
        "cold_start": "p(50)=295.08ms p(95)=307.72ms p(99)=308.85ms",
        "memory_utilization": "p(50)=4.5% p(95)=4.95% p(99)=4.99%",
        "cpu_utilization": "p(50)=84.5% p(95)=84.95% p(99)=84.99%",
    },
    "Node (seed)": {
        "grpc_req_duration": "avg=804.74ms min=8.33ms med=863.37ms max=2.86s p(90)=1.2s p(95)=1.29s",
        "iterations": "164060 273.057755/s",
        "image_size": "45.5MB",
        "cold_start": "p(50)=1018.7ms p(95)=1062.3ms p(99)=1066.2ms",
        "memory_utilization": "p(50)=10.5% p(95)=10.95% p(99)=10.99%",
        "cpu_utilization": "p(50)=79.5% p(95)=79.95% p(99)=79.99%",
    },
}
MEASURES = ["grpc_req_duration", "iterations", "image_size", "cold_start", "memory_utilization",
            "cpu_utilization"]
MEMORY_LIMIT = 512 * 1024 * 1024


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def need(tool, package):
    if shutil.which(tool) is None:
        sys.exit(f"{tool} is not installed (apt-get install {package})")


def spread(values, fmt="{:.3f}"):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}..{fmt.format(max(values))})"


def cpu_ticks(pid):
    """utime + stime of a process (all threads), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def uptime_line():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


# ---------------------------------------------------------------- binaries


def bin_dir(args):
    if args.bin_dir:
        return args.bin_dir
    log("building: cargo build --release -p stackbench -p stackbench-serve "
        "--bin stackbench --bin sb-bubble-sort --example bubble_limit")
    subprocess.run(["cargo", "build", "--release", "-p", "stackbench", "-p", "stackbench-serve", "--bin",
                    "stackbench", "--bin", "sb-bubble-sort", "--example", "bubble_limit"], cwd=ROOT,
                   check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release")


class Server:
    """sb-bubble-sort on core 0; the address comes from its first stdout line."""

    def __init__(self, bins, extra=()):
        self.proc = subprocess.Popen(["taskset", "-c", SERVER_CPU, os.path.join(bins, "sb-bubble-sort"),
                                      "--port", "0", *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on http://([^;\s]+);", line)
        if not m:
            sys.exit(f"sb-bubble-sort did not start: {line}{self.proc.stderr.read()}")
        self.addr = m.group(1)
        self.url = f"http://{self.addr}"

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            sys.exit("sb-bubble-sort did not stop within 15 s of SIGTERM")
        if code != 0:
            sys.exit(f"sb-bubble-sort exited {code} after SIGTERM: {self.proc.stderr.read()}")


# ---------------------------------------------------------------- limit


def limit(bins, seconds, textbook=False):
    """In-process sorts on core 0: {variant: (sorts/s, sorts per CPU-second)}."""
    argv = ["taskset", "-c", SERVER_CPU, os.path.join(bins, "examples", "bubble_limit"), str(seconds)]
    if textbook:
        argv.append("--textbook")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"bubble_limit failed: {out}")
    cpu = usage.ru_utime + usage.ru_stime
    results = {}
    lines = [line for line in out.splitlines() if line.startswith("bubble_limit ")]
    total_secs = sum(float(re.search(r"seconds=([\d.]+)", line).group(1)) for line in lines)
    for line in lines:
        name = line.split()[1]
        rate = float(re.search(r"sorts_per_s=([\d.]+)", line).group(1))
        sorts = int(re.search(r"sorts=(\d+)", line).group(1))
        secs = float(re.search(r"seconds=([\d.]+)", line).group(1))
        # CPU split between variants in proportion to their wall time (one thread, serial).
        results[name] = (rate, sorts / (cpu * secs / total_secs))
    return results


# ---------------------------------------------------------------- load generators


def grpc_data_file(tmp):
    """The original experiment's list as one gRPC frame (flag 0, big-endian length, the List message)."""
    with open(os.path.join(ROOT, "data", "bubble-1000.json")) as f:
        seed = json.load(f)

    def varint(v):
        v &= (1 << 64) - 1
        out = bytearray()
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
        return bytes(out)

    payload = b"".join(varint(x) for x in seed)
    msg = b"\x0a" + varint(len(payload)) + payload
    path = os.path.join(tmp, "seed.grpc")
    with open(path, "wb") as f:
        f.write(b"\x00" + struct.pack(">I", len(msg)) + msg)
    return path


def stackbench_load(bins, url, seconds, tmp, extra=()):
    """`stackbench load --scenario bubble-sort` on core 1: (calls/s, calls, errors, record)."""
    out = os.path.join(tmp, "load.json")
    argv = ["taskset", "-c", LOAD_CPU, os.path.join(bins, "stackbench"), "load", url, "--scenario",
            "bubble-sort", "--cpus", LOAD_CPU, "--threads", "1", "-d", f"{seconds}s", "--json", out, "-q",
            *extra]
    run = subprocess.run(argv, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"stackbench load failed ({run.returncode}): {run.stderr}")
    with open(out) as f:
        record = json.load(f)
    s = record["summary"]
    return s["ok_rps"], s["ok"], s["errors"], record


def h2load(url, data, seconds):
    """h2load on core 1: (calls/s, calls done, failed). HTTP 200 is all it checks; the
    stackbench load runs of the same repetition check the answers."""
    argv = ["taskset", "-c", LOAD_CPU, "h2load", "-D", str(seconds), "-c", str(CONNECTIONS), "-m",
            str(STREAMS), "-t", "1", f"--data={data}", "-H", "content-type: application/grpc", "-H",
            "te: trailers", url + GRPC_PATH]
    run = subprocess.run(argv, capture_output=True, text=True)
    m = re.search(r"finished in ([\d.]+)s, ([\d.]+) req/s", run.stdout)
    done = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed",
                     run.stdout)
    if run.returncode != 0 or not m or not done:
        sys.exit(f"h2load failed: {run.stdout}{run.stderr}")
    return float(m.group(2)), int(done.group(2)), int(done.group(3))


def measured(server, fn):
    """Runs a load function, returning its result and the server's CPU seconds meanwhile."""
    before = cpu_ticks(server.proc.pid)
    result = fn()
    return result, (cpu_ticks(server.proc.pid) - before) / USER_HZ


# ---------------------------------------------------------------- sections


def section_limit(args, bins, report):
    log(f"limit: {args.duration} s of in-process sorts on core {SERVER_CPU}, with the textbook loop")
    r = limit(bins, args.duration, textbook=True)
    ours, text = r["stackbench"], r["textbook"]
    report.append("## limit: in-process bubble sorts of the original experiment's list, one core\n")
    report.append(f"`taskset -c {SERVER_CPU} bubble_limit {args.duration} --textbook` ({uptime_line()})\n")
    report.append("| sort | sorts/s (wall) | sorts per CPU-second |")
    report.append("|---|---|---|")
    report.append(f"| stackbench `bubble_sort` (passes in flight, branch-free) | {ours[0]:.0f} | {ours[1]:.0f} |")
    report.append(f"| textbook loop (`if v[i-1] > v[i] swap`) | {text[0]:.0f} | {text[1]:.0f} |")
    report.append(f"\nstackbench / textbook, per CPU-second: {ours[1] / text[1]:.2f}x\n")


def section_grpc(args, bins, report, tmp):
    need("h2load", "nghttp2-client")
    data = grpc_data_file(tmp)
    rows = []
    extra = ["-c", str(CONNECTIONS), "--streams", str(STREAMS)]
    # Bracketed: every service run sits between two limit runs (L S L S L ...), and its ratio
    # uses the mean of the limit just before and just after, so a drift of the shared host's
    # speed during the pair cancels to first order instead of landing on one side.
    server = Server(bins)
    try:
        stackbench_load(bins, server.url, 2, tmp, extra)  # warm-up, unmeasured
        h2load(server.url, data, 2)
        lim = limit(bins, args.duration)["stackbench"]
        for rep in range(1, args.reps + 1):
            log(f"grpc rep {rep}/{args.reps} ({uptime_line()})")
            (sb_rps, sb_ok, sb_err, _), sb_cpu = measured(
                server, lambda: stackbench_load(bins, server.url, args.duration, tmp, extra))
            mid = limit(bins, args.duration)["stackbench"]
            (h2_rps, h2_ok, h2_failed), h2_cpu = measured(server, lambda: h2load(server.url, data, args.duration))
            end = limit(bins, args.duration)["stackbench"]
            if sb_err or h2_failed:
                sys.exit(f"errors under load: stackbench load {sb_err}, h2load {h2_failed}")
            rows.append({
                "sb_limit_rps": (lim[0] + mid[0]) / 2, "sb_limit_per_cpu": (lim[1] + mid[1]) / 2,
                "h2_limit_rps": (mid[0] + end[0]) / 2, "h2_limit_per_cpu": (mid[1] + end[1]) / 2,
                "sb_rps": sb_rps, "sb_per_cpu": sb_ok / sb_cpu,
                "h2_rps": h2_rps, "h2_per_cpu": h2_ok / h2_cpu,
            })
            log(f"  limit {lim[0]:.0f}/s; stackbench load {sb_rps:.0f}/s ({sb_ok / sb_cpu:.0f}/CPU-s); "
                f"limit {mid[0]:.0f}/s; h2load {h2_rps:.0f}/s ({h2_ok / h2_cpu:.0f}/CPU-s); limit {end[0]:.0f}/s")
            lim = end
    finally:
        server.stop()
    report.append("## grpc: the service on core 0 vs the limit on core 0, load from core 1\n")
    report.append(f"{args.reps} repetitions of {args.duration} s runs, bracketed: limit, service under "
                  f"`stackbench load`, limit, service under h2load, limit, ... (one server process, idle "
                  f"while the limit runs); each service run is compared with the mean of the limit runs "
                  f"just before and after it. {CONNECTIONS} connections x {STREAMS} streams, keep-alive. "
                  f"Machine: {uptime_line()}\n")
    report.append("| rep | stackbench load calls/s | its limit sorts/s | h2load calls/s | its limit sorts/s | "
                  "stackbench load calls/CPU-s | h2load calls/CPU-s |")
    report.append("|---|---|---|---|---|---|---|")
    for i, r in enumerate(rows, 1):
        report.append(f"| {i} | {r['sb_rps']:.0f} | {r['sb_limit_rps']:.0f} | {r['h2_rps']:.0f} | "
                      f"{r['h2_limit_rps']:.0f} | {r['sb_per_cpu']:.0f} | {r['h2_per_cpu']:.0f} |")
    report.append("")
    report.append("| ratio to the limit, median (min..max) | stackbench load | h2load |")
    report.append("|---|---|---|")
    report.append(f"| throughput (calls/s / sorts/s) | {spread([r['sb_rps'] / r['sb_limit_rps'] for r in rows])} | "
                  f"{spread([r['h2_rps'] / r['h2_limit_rps'] for r in rows])} |")
    report.append(f"| CPU (calls per CPU-s / sorts per CPU-s) | "
                  f"{spread([r['sb_per_cpu'] / r['sb_limit_per_cpu'] for r in rows])} | "
                  f"{spread([r['h2_per_cpu'] / r['h2_limit_per_cpu'] for r in rows])} |")
    report.append("")


def stripped_size(bins, tmp):
    out = os.path.join(tmp, "sb-bubble-sort.stripped")
    subprocess.run(["strip", "-o", out, os.path.join(bins, "sb-bubble-sort")], check=True)
    return os.path.getsize(out)


def section_size(args, bins, report, tmp):
    size = stripped_size(bins, tmp)
    unstripped = os.path.getsize(os.path.join(bins, "sb-bubble-sort"))
    report.append("## size\n")
    report.append(f"sb-bubble-sort: {size} bytes stripped ({size / 1e6:.2f} MB), {unstripped} bytes as built "
                  "(release: Cargo's default LTO and codegen units, strip = true). The original experiment's images: Rust 2.1 MB, Go 3.2 MB, "
                  "Node 45.5 MB.\n")


def fmt_ms(us):
    ms = us / 1000
    return f"{ms / 1000:.2f}s" if ms >= 1000 else f"{ms:.2f}ms"


def section_seed(args, bins, report, tmp):
    out = args.seed_out or os.path.join(ROOT, "results", time.strftime("bench-bubble-%Y%m%dT%H%M%SZ", time.gmtime()))
    # plans/bubble.toml as shipped: its Rust rows run sb-bubble-sort from {bin_dir}, the directory
    # of the stackbench that runs the plan (the artifact whose size is reported).
    plan = os.path.join(ROOT, "plans", "bubble.toml")
    argv = [os.path.join(bins, "stackbench"), "run", plan, "--out", out, "--no-report"]
    if args.seed_variant != "full":
        argv += ["--variant", args.seed_variant]
    log("seed: " + " ".join(argv))
    run = subprocess.run(argv, cwd=ROOT, env={**os.environ, "PATH": bins + os.pathsep + os.environ["PATH"]})
    if run.returncode != 0:
        sys.exit(f"stackbench run failed ({run.returncode}); results in {out}")
    with open(os.path.join(out, "contestants", "tonic.json")) as f:
        contestant = json.load(f)
    records = []
    for path in sorted(glob.glob(os.path.join(out, "runs", "*.json"))):
        with open(path) as f:
            records.append(json.load(f))
    if not records:
        sys.exit(f"no runs in {out}")
    # The median repetition by ok calls/s stands for the contestant (as the report does).
    records.sort(key=lambda r: r["summary"]["ok_rps"])
    rec = records[len(records) // 2]
    s, lat = rec["summary"], rec["summary"]["latency"]
    samples = rec.get("samples") or {}
    cpu, rss = samples.get("cpu_percent", {}), samples.get("rss_bytes", {})
    cold = contestant.get("cold_start") or {}
    ours = {
        "grpc_req_duration": f"avg={fmt_ms(lat['mean_us'])} min={fmt_ms(lat['min_us'])} med={fmt_ms(lat['p50_us'])} "
                             f"max={fmt_ms(lat['max_us'])} p(90)={fmt_ms(lat['p90_us'])} p(95)={fmt_ms(lat['p95_us'])}",
        "iterations": f"{s['ok']} {s['ok_rps']:.6f}/s",
        "image_size": f"{stripped_size(bins, tmp) / 1e6:.2f}MB (stripped binary)",
        "cold_start": " ".join(f"p({q})={cold[k]:.2f}ms" for q, k in (("50", "p50"), ("95", "p95"),
                                                                      ("99", "p99")) if k in cold)
        + f" (n={cold.get('n', 0)})",
        "memory_utilization": " ".join(f"p({q})={100 * rss[k] / MEMORY_LIMIT:.2f}%" for q, k in
                                       (("50", "p50"), ("95", "p95"), ("99", "p99")) if k in rss)
        + (f" (RSS p50 {rss['p50'] / 2**20:.1f} MiB of 512 MiB)" if "p50" in rss else ""),
        "cpu_utilization": " ".join(f"p({q})={cpu[k]:.1f}%" for q, k in (("50", "p50"), ("95", "p95"),
                                                                        ("99", "p99")) if k in cpu),
    }
    report.append("## seed: the original experiment's profile (plans/bubble.toml)\n")
    report.append(f"`stackbench run plans/bubble.toml{' --variant ' + args.seed_variant if args.seed_variant != 'full' else ''}` "
                  "with `sb-bubble-sort` as the command: 250 users, 100 ms think time, a new connection per "
                  f"call, {rec['params'].get('duration_ms', 0) / 1000:.0f} s measured per repetition "
                  f"({len(records)} repetitions, the median one shown); the server on core 0 in a cgroup of 1 CPU "
                  f"and 512 MiB, the load on core 1. Machine: {uptime_line()}\n")
    report.append("| measure | stackbench tonic (this machine) | " + " | ".join(
        f"{k} (Cloud Run, 1 vCPU)" for k in SEED_ROWS) + " |")
    report.append("|---|---|" + "---|" * len(SEED_ROWS))
    for m in MEASURES:
        report.append(f"| {m} | {ours[m]} | " + " | ".join(SEED_ROWS[k][m] for k in SEED_ROWS) + " |")
    report.append(f"\nErrors: {s['errors']} ({json.dumps(rec.get('errors', {}))}); checks "
                  f"{s['checks']['performed']} performed, {s['checks']['failed']} failed. Results: {out}\n")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sections", nargs="*", default=["all"])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--duration", type=int, default=10, help="seconds per measured run (limit and grpc)")
    p.add_argument("--seed-variant", default="short", help="plans/bubble.toml variant: short (30 s runs) or full")
    p.add_argument("--seed-out", help="result directory of the seed run (default: results/bench-bubble-<time>)")
    p.add_argument("--bin-dir")
    p.add_argument("--out", help="also write the Markdown report here")
    args = p.parse_args()
    sections = ["limit", "grpc", "size", "seed"] if "all" in args.sections else args.sections
    need("taskset", "util-linux")
    bins = bin_dir(args)
    report = [f"# bubble-sort benchmark ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n",
              f"Contestant pinned to core {SERVER_CPU}, load pinned to core {LOAD_CPU}; 127.0.0.1 only.\n"]
    with tempfile.TemporaryDirectory(prefix="bubble-bench-") as tmp:
        for s in sections:
            if s == "limit":
                section_limit(args, bins, report)
            elif s == "grpc":
                section_grpc(args, bins, report, tmp)
            elif s == "size":
                section_size(args, bins, report, tmp)
            elif s == "seed":
                section_seed(args, bins, report, tmp)
            else:
                sys.exit(f"unknown section {s!r}; the sections are limit, grpc, size, seed, all")
    text = "\n".join(report)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()

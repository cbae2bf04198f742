#!/usr/bin/env python3
"""event-log and dummy: the Rust reference contestants against their anchors, side by side.

Every figure is a ratio measured in one run, interleaved (A B C ... A B C ...) so that
the machine's drift hits every contestant alike; the report gives the median and the
spread (min..max) of the per-repetition ratios. Contestants run pinned to core 0
(`taskset -c 0`); the load (wrk, pgbench) runs pinned to core 1. Only 127.0.0.1.

  dummy       sb-dummy on axum, actix and hyper vs nginx `return 200` (one worker, core 0),
              the same wrk command for all: wrk -t1 -c64 -d10s, POST of one event; nginx runs
              before and after every stack and the ratio is to the mean of the two.
  postgres    sb-event-log on a private PostgreSQL (initdb here, not pinned) vs pgbench
              running the same statement (prepared) at the same concurrency, both count modes.
              The table is emptied before every run; each run starts from zero events.
  growth      latency with 0 and with 1,000,000 stored events, both count modes, on the
              embedded SQLite store (and PostgreSQL with --growth-postgres): wrk -c1 (one
              sequential client), p50 and p99.
  cold-start  exec -> first correct answer of sb-event-log on an existing embedded store,
              20 trials, p50; anchor: nginx exec -> first 200, same method.
  sizes       size of the slim binaries, and which store code each one links.

Usage: bench/event-log/bench.py [all|dummy|postgres|growth|cold-start|sizes ...]
                                [--reps 3] [--duration 10] [--connections 64] [--bin-dir DIR]
                                [--stacks axum,actix,hyper] [--out FILE]
Without --bin-dir it runs `cargo build --release -p stackbench-serve --bin sb-dummy --bin sb-event-log`.
"""

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STACKS = ["axum", "actix", "hyper"]
EVENT = '{"type":"page_view","source":"web","value":1.5,"timestamp":1764460800000}'
SERVER_CPU, LOAD_CPU = "0", "1"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def need(tool):
    if shutil.which(tool) is None:
        sys.exit(f"{tool} is not installed (apt-get install {tool})")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, what, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.02)
    sys.exit(f"{what} did not listen on {port} within {timeout} s")


def cpu_seconds(pid):
    """User and system CPU seconds of a process so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def is_root():
    return os.geteuid() == 0


def spread(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}..{max(values):.2f})"


# ---------------------------------------------------------------- processes


class Contestant:
    """A slim binary on core 0; the address comes from its first stdout line."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(["taskset", "-c", SERVER_CPU] + argv + ["--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"http://([^;\s]+)", line)
        if not m:
            sys.exit(f"{argv} did not start: {line}{self.proc.stderr.read()}")
        self.url = f"http://{m.group(1)}"

    def cpu_pid(self):
        """The process that serves (taskset execs the binary)."""
        return self.proc.pid

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Nginx:
    """nginx answering `return 200 '{"count":1}'`, one worker, core 0. With `master=False` the one
    process serves itself (`master_process off`), for tools that must see the serving process
    (instructions.py runs it under callgrind); `wrap` goes before its command (after `taskset`)."""

    def __init__(self, tmp, master=True, wrap=()):
        need("nginx")
        self.dir = tempfile.mkdtemp(dir=tmp, prefix="nginx-")
        self.port = free_port()
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""worker_processes 1;
master_process {"on" if master else "off"};
daemon off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 100000000;
  client_body_temp_path {self.dir}/body;
  proxy_temp_path {self.dir}/proxy;
  fastcgi_temp_path {self.dir}/fastcgi;
  uwsgi_temp_path {self.dir}/uwsgi;
  scgi_temp_path {self.dir}/scgi;
  server {{
    listen 127.0.0.1:{self.port};
    location / {{ default_type application/json; return 200 '{{"count":1}}'; }}
  }}
}}
""")
        self.argv = list(wrap) + ["nginx", "-c", conf, "-p", self.dir]
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(["taskset", "-c", SERVER_CPU] + self.argv,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, "nginx")
        return self

    def cpu_pid(self):
        """nginx's one worker (the child of the master this script started)."""
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True).stdout.split()
        if len(out) != 1:
            sys.exit(f"expected one nginx worker under pid {self.proc.pid}, found {out}")
        return int(out[0])

    def stop(self):
        self.proc.send_signal(signal.SIGQUIT)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Postgres:
    """A throwaway PostgreSQL cluster (initdb in a temp dir, default durability), not pinned."""

    def __init__(self, tmp, max_connections=200):
        bins = sorted(d for d in os.listdir("/usr/lib/postgresql")) if os.path.isdir("/usr/lib/postgresql") else []
        if not bins:
            sys.exit("PostgreSQL is not installed (apt-get install postgresql)")
        self.bin = f"/usr/lib/postgresql/{bins[-1]}/bin"
        self.dir = tempfile.mkdtemp(dir=tmp, prefix="pg-")
        self.as_pg = ["runuser", "-u", "postgres", "--"] if is_root() else []
        if is_root():
            shutil.chown(self.dir, "postgres", "postgres")
        self.port = free_port()
        subprocess.run(self.as_pg + [f"{self.bin}/initdb", "-D", f"{self.dir}/data", "-A", "trust", "-U",
                                     "postgres", "--no-sync"], check=True, stdout=subprocess.DEVNULL)
        opts = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                f"-c max_connections={max_connections} -c shared_buffers=256MB")
        subprocess.run(self.as_pg + [f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-o", opts, "-l",
                                     f"{self.dir}/log", "-w", "start"], check=True, stdout=subprocess.DEVNULL)
        self.psql("CREATE DATABASE bench")
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/bench"

    def psql(self, sql, db="postgres"):
        out = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", db,
                              "-tAq", "-c", sql], check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def stop(self):
        subprocess.run(self.as_pg + [f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-m", "fast", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# ---------------------------------------------------------------- load


def lua_script(tmp):
    path = os.path.join(tmp, "post-event.lua")
    with open(path, "w") as f:
        f.write('wrk.method = "POST"\n'
                f"wrk.body = '{EVENT}'\n"
                'wrk.headers["Content-Type"] = "application/json"\n')
    return path


def ms(text):
    value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk(url, script, connections, duration, latency=False):
    """One wrk run on core 1: requests/s, p50 and p99 (ms, with --latency), and errors."""
    argv = ["taskset", "-c", LOAD_CPU, "wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--timeout", "30s",
            "-s", script]
    if latency:
        argv.append("--latency")
    out = subprocess.run(argv + [url + "/events"], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    if bad or errors:
        sys.exit(f"wrk saw failed requests on {url}:\n{out}")
    result = {"rps": rps, "requests": int(re.search(r"(\d+) requests in", out).group(1))}
    if latency:
        result["p50"] = ms(re.search(r"\s50%\s+(\S+)", out).group(1))
        result["p99"] = ms(re.search(r"\s99%\s+(\S+)", out).group(1))
    return result


# ---------------------------------------------------------------- benchmarks


def bench_dummy(args, bins, tmp):
    need("wrk")
    script = lua_script(tmp)
    nginx = Nginx(tmp)

    cpu = {}  # name -> [(user µs, system µs) per request, one pair per run]

    def measure(name):
        server = nginx.start() if name == "nginx" else Contestant([f"{bins}/sb-dummy", "--stack", name])
        wrk(server.url, script, args.connections, 2)  # warm-up
        pid = server.cpu_pid()
        user0, sys0 = cpu_seconds(pid)
        result = wrk(server.url, script, args.connections, args.duration)
        user1, sys1 = cpu_seconds(pid)
        server.stop()
        n = result["requests"]
        cpu.setdefault(name, []).append(((user1 - user0) * 1e6 / n, (sys1 - sys0) * 1e6 / n))
        log(f"  {name} {result['rps']:.0f} req/s, {cpu[name][-1][0]:.2f} µs user + {cpu[name][-1][1]:.2f} µs "
            f"system per request")
        return result["rps"]

    # Bracketed: nginx runs before and after every stack (nginx A nginx B nginx C nginx), the
    # stacks' order rotating each repetition, and a stack's ratio is to the mean of the two nginx
    # runs around it, so the shared machine's drift cancels to first order.
    stacks = [s for s in args.stacks.split(",") if s]
    unknown = [s for s in stacks if s not in STACKS]
    if unknown or not stacks:
        sys.exit(f"--stacks: {','.join(unknown) or 'nothing given'}: choose among {', '.join(STACKS)}")
    rps = {n: [] for n in ["nginx"] + stacks}
    ratios = {n: [] for n in stacks}
    before = measure("nginx")
    rps["nginx"].append(before)
    for rep in range(args.reps):
        log(f"dummy rep {rep + 1}/{args.reps}")
        order = stacks[rep % len(stacks):] + stacks[:rep % len(stacks)]
        for name in order:
            value = measure(name)
            after = measure("nginx")
            rps[name].append(value)
            rps["nginx"].append(after)
            ratios[name].append(value / ((before + after) / 2))
            before = after
    lines = ["### dummy vs nginx `return 200`", "",
             f"`wrk -t1 -c{args.connections} -d{args.duration}s` POST of one event; server on core 0, wrk on "
             f"core 1. {args.reps} repetitions, bracketed: nginx, stack, nginx, stack, nginx, stack, nginx, ... (the "
             f"stacks' order rotating), each stack's ratio taken to the mean of the nginx runs just before and "
             f"after it.", "",
             "The server's CPU time per request (`/proc/PID/stat` around each measured run; user space, "
             "then the kernel's system time, which includes the loopback TCP work of both ends) says where "
             "a difference lies; on a shared VM the system time moves with the host, the user time much less.",
             "",
             "| contestant | requests/s (median) | ratio to nginx, median (min..max) | CPU µs per request: user, system (median) |",
             "|---|---:|---:|---:|"]

    def per_request(name):
        return (f"{statistics.median(u for u, _ in cpu[name]):.2f}, "
                f"{statistics.median(s for _, s in cpu[name]):.2f}")

    lines.append(f"| nginx 1.22 `return 200` (anchor) | {statistics.median(rps['nginx']):,.0f} | 1 | "
                 f"{per_request('nginx')} |")
    for name in stacks:
        lines.append(f"| sb-dummy --stack {name} | {statistics.median(rps[name]):,.0f} | {spread(ratios[name])} | "
                     f"{per_request(name)} |")
    return lines


def pgbench_script(tmp, mode):
    insert = ("INSERT INTO stackbench_events (kind, source, value, ts_ms) "
              "VALUES ('page_view', 'web', :v / 100.0, 1764460800000)")
    tail = ("SELECT COUNT(*) + 1 FROM stackbench_events" if mode == "query"
            else "UPDATE stackbench_events_count SET n = n + 1 WHERE id = 1 RETURNING n")
    path = os.path.join(tmp, f"pgbench-{mode}.sql")
    with open(path, "w") as f:
        f.write(f"\\set v random(1, 100000)\nWITH ins AS ({insert}) {tail};\n")
    return path


def pgbench(pg, script, connections, duration):
    argv = ["taskset", "-c", LOAD_CPU, "pgbench", "-n", "-M", "prepared", "-c", str(connections), "-j", "1",
            "-T", str(duration), "-f", script, "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "bench"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return float(re.search(r"tps = ([\d.]+)", out).group(1))


def bench_postgres(args, bins, tmp):
    need("wrk")
    need("pgbench")
    script = lua_script(tmp)
    pg = Postgres(tmp)
    c = args.pg_connections
    lines = ["### event-log on PostgreSQL vs pgbench, same statement, same concurrency", "",
             f"Private PostgreSQL (default durability: fsync on, synchronous_commit on; not pinned). "
             f"sb-event-log --stack STACK --store ...?pool={c} on core 0 with `wrk -t1 -c{c} -d{args.duration}s` "
             f"on core 1, vs `pgbench -n -M prepared -c {c} -j 1 -T {args.duration}` on core 1 running the "
             f"statement sb-event-log sends. The table is emptied before every run. "
             f"{args.reps} interleaved repetitions.", "",
             "| count mode | contestant | events/s (median) | ratio to pgbench, median (min..max) |",
             "|---|---|---:|---:|"]
    try:
        for mode in ["query", "counter"]:
            results = {n: [] for n in ["pgbench"] + STACKS}
            store = f"{pg.url}?pool={c}"
            for rep in range(args.reps):
                for name in ["pgbench"] + STACKS:
                    if name == "pgbench":
                        Contestant([f"{bins}/sb-event-log", "--store", store, "--count", mode, "--reset"]).stop()
                        results[name].append(pgbench(pg, pgbench_script(tmp, mode), c, args.duration))
                    else:
                        server = Contestant([f"{bins}/sb-event-log", "--stack", name, "--store", store,
                                             "--count", mode, "--reset"])
                        results[name].append(wrk(server.url, script, c, args.duration)["rps"])
                        server.stop()
                    log(f"postgres {mode} rep {rep + 1}: {name} {results[name][-1]:.0f}/s")
            for name in ["pgbench"] + STACKS:
                ratios = [a / b for a, b in zip(results[name], results["pgbench"])]
                label = "pgbench (anchor)" if name == "pgbench" else f"sb-event-log --stack {name}"
                lines.append(f"| {mode} | {label} | {statistics.median(results[name]):,.0f} | {spread(ratios)} |")
    finally:
        pg.stop()
    return lines


def sqlite_fill(path, n):
    """`n` events straight into the embedded store's table (created by the server)."""
    sql = (f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n}) "
           "INSERT INTO stackbench_events (kind, source, value, ts_ms) "
           "SELECT 'page_view', 'web', x % 1000, 1764460800000 + x FROM c;")
    subprocess.run(["sqlite3", path, sql], check=True)


def bench_growth(args, bins, tmp):
    need("wrk")
    need("sqlite3")
    script = lua_script(tmp)
    stores = ["sqlite"] + (["postgres"] if args.growth_postgres else [])
    lines = ["### latency with 0 and with 1,000,000 stored events", "",
             f"One sequential client (`wrk -t1 -c1 -d{args.duration}s --latency`, core 1), sb-event-log "
             f"--stack axum on core 0. \"0\" starts from an empty store (it holds the events of the run "
             f"itself, a few thousand, by its end). The commit is not fsynced here (SQLite `?sync=normal`, "
             f"PostgreSQL `synchronous_commit=off`): this compares count strategies, and the fsync latency "
             f"of a shared disk would drown them. {args.reps} interleaved repetitions.", "",
             "| store | count mode | p50 at 0 | p50 at 1M | p50 ratio 1M/0, median (min..max) | "
             "p99 at 0 | p99 at 1M | p99 ratio |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    pg = Postgres(tmp) if "postgres" in stores else None
    if pg:
        pg.psql("ALTER SYSTEM SET synchronous_commit = off")
        pg.psql("SELECT pg_reload_conf()")
    try:
        # A 1M-event SQLite file, built once and copied for every run.
        full = os.path.join(tmp, "full.db")
        Contestant([f"{bins}/sb-event-log", "--store", f"sqlite:{full}", "--reset"]).stop()
        sqlite_fill(full, 1_000_000)
        for store in stores:
            for mode in ["query", "counter"]:
                res = {0: [], 1: []}
                for rep in range(args.reps):
                    for size in (0, 1):
                        if store == "sqlite":
                            path = os.path.join(tmp, "run.db")
                            for ext in ("", "-wal", "-shm"):
                                if os.path.exists(path + ext):
                                    os.remove(path + ext)
                            if size:
                                shutil.copy(full, path)
                            argv = ["--store", f"sqlite:{path}?sync=normal"]
                        else:
                            url = f"{pg.url}?table=growth"
                            Contestant([f"{bins}/sb-event-log", "--store", url, "--reset"]).stop()
                            if size:
                                pg.psql("INSERT INTO growth (kind, source, value, ts_ms) SELECT 'page_view', "
                                        "'web', x % 1000, 1764460800000 + x FROM generate_series(1, 1000000) x",
                                        db="bench")
                                pg.psql("VACUUM ANALYZE growth", db="bench")
                            argv = ["--store", url]
                        server = Contestant([f"{bins}/sb-event-log", "--stack", "axum", "--count", mode] + argv)
                        wrk(server.url, script, 1, 1)  # warm-up
                        res[size].append(wrk(server.url, script, 1, args.duration, latency=True))
                        server.stop()
                        log(f"growth {store} {mode} rep {rep + 1} size {size}: {res[size][-1]}")
                p50 = [b["p50"] / a["p50"] for a, b in zip(res[0], res[1])]
                p99 = [b["p99"] / a["p99"] for a, b in zip(res[0], res[1])]
                med = lambda size, k: statistics.median(r[k] for r in res[size])  # noqa: E731
                lines.append(f"| {store} | {mode} | {med(0, 'p50'):.3f} ms | {med(1, 'p50'):.3f} ms | {spread(p50)} "
                             f"| {med(0, 'p99'):.3f} ms | {med(1, 'p99'):.3f} ms | {spread(p99)} |")
    finally:
        if pg:
            pg.stop()
    return lines


def first_answer(argv, port, body, check, cwd=None):
    """Seconds from exec to the first response that passes `check`."""
    request = (f"POST /events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}").encode()
    t0 = time.perf_counter()
    proc = subprocess.Popen(["taskset", "-c", SERVER_CPU] + argv, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=cwd)
    try:
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
                    s.sendall(request)
                    data = b""
                    while chunk := s.recv(4096):
                        data += chunk
                if check(data):
                    return time.perf_counter() - t0
            except OSError:
                pass
            if proc.poll() is not None:
                sys.exit(f"{argv} exited before answering")
            if time.perf_counter() - t0 > 10:
                sys.exit(f"{argv} gave no correct answer within 10 s")
            time.sleep(0.0002)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()


def bench_cold_start(args, bins, tmp):
    trials = 20
    db = os.path.join(tmp, "cold.db")
    server = Contestant([f"{bins}/sb-event-log", "--store", f"sqlite:{db}", "--reset"])
    server.stop()
    counts = [0]

    def correct(data):
        m = re.search(rb'\{"count":(\d+)\}', data)
        if data.startswith(b"HTTP/1.1 200") and m and int(m.group(1)) == counts[0] + 1:
            counts[0] += 1
            return True
        return False

    ours, anchor = [], []
    nginx = Nginx(tmp)
    for _ in range(trials):
        port = free_port()
        ours.append(first_answer([f"{bins}/sb-event-log", "--store", f"sqlite:{db}", "--port", str(port)],
                                 port, EVENT, correct))
        anchor.append(first_answer(nginx.argv, nginx.port, EVENT, lambda d: d.startswith(b"HTTP/1.1 200")))
    p50, a50 = statistics.median(ours) * 1000, statistics.median(anchor) * 1000
    ratios = [a / b for a, b in zip(ours, anchor)]
    return ["### cold start on the embedded store", "",
            f"exec -> first correct answer (`POST /events` answered `{{\"count\":N+1}}` on a store holding N), "
            f"{trials} trials, server on core 0, polled every 0.2 ms by this (unpinned) script; the anchor is "
            "nginx's exec -> first `200`, same method, interleaved.", "",
            "| contestant | p50 | min..max | ratio to nginx, median (min..max) |", "|---|---:|---:|---:|",
            f"| sb-event-log (axum, sqlite) | {p50:.1f} ms | {min(ours) * 1000:.1f}..{max(ours) * 1000:.1f} ms "
            f"| {spread(ratios)} |",
            f"| nginx 1.22 (anchor) | {a50:.1f} ms | {min(anchor) * 1000:.1f}..{max(anchor) * 1000:.1f} ms | 1 |"]


def bench_sizes(args, bins, tmp):
    lines = ["### slim binaries", "", "Release build, stripped copies. \"links\" lists the store "
             "libraries whose code is in the binary (symbol names found by `nm` before stripping).", "",
             "| binary | size | stripped | links |", "|---|---:|---:|---|"]
    for name in ["sb-dummy", "sb-event-log"]:
        path = f"{bins}/{name}"
        stripped = os.path.join(tmp, name + ".stripped")
        subprocess.run(["strip", "-o", stripped, path], check=True)
        syms = subprocess.run(["nm", "-C", path], capture_output=True, text=True).stdout
        found = [lib for lib, pat in [("SQLite", "sqlite3_step"), ("tokio-postgres", "tokio_postgres::"),
                                      ("mysql_async", "mysql_async::"), ("redis", "redis::"),
                                      ("hyper-util client (InfluxDB)", "client::legacy")] if pat in syms]
        if not syms.strip():
            # A stripped binary (the release profile strips) says nothing about what it links.
            links = "unknown: no symbol table (give --bin-dir a `cargo build --profile profiling` directory)"
        else:
            links = ", ".join(found) or "no store code"
        mib = lambda p: f"{os.path.getsize(p) / 1048576:.1f} MiB"  # noqa: E731
        lines.append(f"| {name} | {mib(path)} | {mib(stripped)} | {links} |")
    return lines


BENCHES = {"dummy": bench_dummy, "postgres": bench_postgres, "growth": bench_growth,
           "cold-start": bench_cold_start, "sizes": bench_sizes}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("which", nargs="*", default=["all"], help="all, or some of: " + ", ".join(BENCHES))
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--duration", type=int, default=10, help="seconds per measured run")
    p.add_argument("--connections", type=int, default=64, help="wrk connections for dummy")
    p.add_argument("--stacks", default=",".join(STACKS), help="dummy: the stacks to measure, comma-separated")
    p.add_argument("--pg-connections", type=int, default=32, help="concurrency of the PostgreSQL comparison")
    p.add_argument("--growth-postgres", action="store_true", help="growth on PostgreSQL too")
    p.add_argument("--bin-dir", help="directory with release sb-dummy and sb-event-log")
    p.add_argument("--out", help="also write the Markdown report here")
    args = p.parse_args()
    which = list(BENCHES) if "all" in args.which else args.which
    for w in which:
        if w not in BENCHES:
            sys.exit(f"unknown benchmark {w!r}; choose from all, {', '.join(BENCHES)}")
    need("taskset")
    bins = args.bin_dir
    if not bins:
        subprocess.run(["cargo", "build", "--release", "-p", "stackbench-serve", "--bin", "sb-dummy", "--bin",
                        "sb-event-log"], cwd=ROOT, check=True)
        bins = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release")
    load = os.getloadavg()
    report = ["## event-log / dummy benchmarks", "",
              f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load average before the run "
              f"{load[0]:.1f}. Command: `bench/event-log/bench.py {' '.join(sys.argv[1:])}`", ""]
    def flush():
        # Written after every benchmark: a failure or Ctrl-C later loses nothing earlier.
        if args.out:
            with open(args.out, "w") as f:
                f.write("\n".join(report) + "\n")

    print("\n".join(report), flush=True)
    with tempfile.TemporaryDirectory(prefix="stackbench-eventlog-bench-") as tmp:
        os.chmod(tmp, 0o755)
        for w in which:
            log(f"== {w}")
            section = BENCHES[w](args, bins, tmp) + [""]
            report += section
            print("\n".join(section), flush=True)
            flush()


if __name__ == "__main__":
    main()

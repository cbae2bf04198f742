#!/usr/bin/env python3
"""db-read: every driver side by side, with the original experiment's load, against raw-database anchors.

The MySQL-drivers experiment ran `wrk -c 100 -d 10` against one Elixir server per driver. This script
does the same for the Rust reference contestant `sb-db-read`, in one run:

  * private database instances started here (PostgreSQL from initdb, MariaDB from
    mariadb-install-db, Redis), so the shared test databases are not disturbed and
    PostgreSQL can take 100 pgbench clients; they are not pinned;
  * the contestant pinned to core 0 (`taskset -c 0`), serving all eight drivers;
  * the load pinned to core 1: `wrk -t1 -c100 -d10s` per driver (after a 2 s warm-up),
    GET /db/<driver>?a=1&b=2 as in the seed (fixed ids: two rows);
  * anchors, also on core 1, at the same concurrency: pgbench (custom script, the same
    two-row query, prepared), mariadb-slap (the same query), redis-benchmark (HMGET of
    the same hash, pipelined by 2: two rows per round trip);
  * repetitions interleave the drivers and anchors (A B C ... A B C ...), so slow
    drift of the machine hits all of them; the report gives medians and the spread
    (min..max) of the per-repetition ratios.

Usage: bench/db-read/bench.py [--reps 3] [--duration 10] [--connections 100] [--bin PATH]
Without --bin it builds `sb-db-read` with `cargo build --release` first.
Prints a Markdown report; --out FILE also writes it there.
"""

import argparse
import glob
import json
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
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVERS = [
    ("tokio-postgres", "pg"),
    ("sqlx-postgres", "pg"),
    ("sea-orm-postgres", "pg"),
    ("mysql-async", "mysql"),
    ("sqlx-mysql", "mysql"),
    ("sea-orm-mysql", "mysql"),
    ("redis", "redis"),
    ("sqlite", None),
]
QUERY = "SELECT id, name, price FROM items WHERE id IN (1, 2)"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def need(tool):
    path = shutil.which(tool)
    if not path:
        sys.exit(f"{tool} is not installed; apt-get install wrk postgresql postgresql-contrib mariadb-server mariadb-client redis-server redis-tools")
    return path


def wait_port(port, what, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"{what} did not listen on {port} within {timeout} s")


def is_root():
    return os.geteuid() == 0


class Databases:
    """Private PostgreSQL, MariaDB and Redis instances in one temp directory."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []
        self.pg_bin = None

    def start(self):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
        if not bins:
            sys.exit("PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)")
        self.pg_bin = bins[-1]
        as_pg = ["runuser", "-u", "postgres", "--"] if is_root() else []
        pgdir = os.path.join(self.tmp, "pg")
        os.makedirs(pgdir)
        if is_root():
            subprocess.run(["chown", "-R", "postgres:", pgdir], check=True)
        self.pg_port = free_port()
        subprocess.run(as_pg + [f"{self.pg_bin}/initdb", "-D", f"{pgdir}/data", "-A", "trust", "-U", "postgres", "--no-sync"],
                       check=True, stdout=subprocess.DEVNULL)
        opts = (f"-p {self.pg_port} -k {pgdir} -c listen_addresses=127.0.0.1 -c max_connections=250 "
                f"-c shared_buffers=128MB -c fsync=off")
        subprocess.run(as_pg + [f"{self.pg_bin}/pg_ctl", "-D", f"{pgdir}/data", "-o", opts, "-l", f"{pgdir}/log", "-w", "start"],
                       check=True, stdout=subprocess.DEVNULL)
        self.pg_stop = as_pg + [f"{self.pg_bin}/pg_ctl", "-D", f"{pgdir}/data", "-m", "fast", "stop"]
        subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "postgres", "-qc", "CREATE DATABASE bench"],
                       check=True)

        mydir = os.path.join(self.tmp, "mariadb")
        user = ["--user=root"] if is_root() else []
        subprocess.run([need("mariadb-install-db"), "--no-defaults", f"--datadir={mydir}/data",
                        "--auth-root-authentication-method=normal", "--skip-test-db"] + user,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.my_port = free_port()
        self.procs.append(subprocess.Popen(
            ["/usr/sbin/mariadbd", "--no-defaults", f"--datadir={mydir}/data", f"--port={self.my_port}",
             f"--socket={mydir}/sock", f"--pid-file={mydir}/pid", f"--log-error={mydir}/err.log",
             "--bind-address=127.0.0.1", "--skip-grant-tables", "--skip-log-bin", "--max-connections=300",
             "--innodb-buffer-pool-size=128M"] + user,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(self.my_port, "mariadbd")
        subprocess.run(["mariadb", "-h", "127.0.0.1", "-P", str(self.my_port), "-u", "root", "-e", "CREATE DATABASE bench"],
                       check=True)

        self.redis_port = free_port()
        self.procs.append(subprocess.Popen(
            [need("redis-server"), "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.tmp], stdout=subprocess.DEVNULL))
        wait_port(self.redis_port, "redis-server")

    def urls(self):
        return {
            "postgres": f"postgres://postgres@127.0.0.1:{self.pg_port}/bench",
            "mysql": f"mysql://root@127.0.0.1:{self.my_port}/bench",
            "redis": f"redis://127.0.0.1:{self.redis_port}/0",
        }

    def stop(self):
        for p in self.procs:
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.pg_bin:
            subprocess.run(self.pg_stop, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def build():
    log("building sb-db-read (release)")
    subprocess.run(["cargo", "build", "--release", "-p", "stackbench-serve", "--bin", "sb-db-read"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "sb-db-read")


def start_contestant(binary, urls, sqlite, pool):
    port = free_port()
    args = ["taskset", "-c", "0", binary, "--seed", "--store", urls["postgres"], "--store", urls["mysql"],
            "--store", urls["redis"], "--store", "sqlite:" + sqlite, "--port", str(port)]
    if pool:
        args += ["--pool", str(pool)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    lines = []
    while True:
        line = proc.stdout.readline()
        if not line:
            sys.exit(f"sb-db-read stopped: {lines}")
        lines.append(line.rstrip())
        if "pool sizes:" in line:
            break
    return proc, port, lines


def check_answers(port):
    for driver, _ in DRIVERS:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/db/{driver}?a=1&b=2") as r:
            rows = json.load(r)
        want = [{"id": 1, "name": "item-1", "price": 7919}, {"id": 2, "name": "item-2", "price": 5838}]
        if rows != want:
            sys.exit(f"{driver} answered {rows}")


UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4, "h": 3.6e6}


def ms(text):
    m = re.match(r"([\d.]+|nan)(us|ms|s|m|h)$", text)
    return float(m.group(1)) * UNITS[m.group(2)]


def wrk(url, duration, connections):
    out = subprocess.run(["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--latency", url],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    lat = dict(re.findall(r"^\s*(50|99)%\s+([\d.]+(?:us|ms|s|m|h))\s*$", out, re.M))
    if "50" not in lat or "99" not in lat:
        log(f"cannot read wrk's latency distribution (reported as nan) from:\n{out}")
        lat = {"50": "nanms", "99": "nanms"}
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    return {"rps": rps, "p50": ms(lat["50"]), "p99": ms(lat["99"]),
            "non2xx": int(bad.group(1)) if bad else 0, "socket_errors": errors.group(1) if errors else ""}


def pgbench(db, duration, connections, script):
    out = subprocess.run(["taskset", "-c", "1", "pgbench", "-h", "127.0.0.1", "-p", str(db.pg_port), "-U", "postgres",
                          "-n", "-M", "prepared", "-c", str(connections), "-j", "1", "-T", str(duration),
                          "-f", script, "bench"], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"tps = ([\d.]+)", out).group(1))


def mariadb_slap(db, queries, connections):
    out = subprocess.run(["taskset", "-c", "1", "mariadb-slap", "-h", "127.0.0.1", "-P", str(db.my_port), "-u", "root",
                          f"--concurrency={connections}", "--iterations=1", f"--number-of-queries={queries}",
                          f"--query={QUERY}", "--create-schema=bench", "--no-drop"], capture_output=True, text=True, check=True).stdout
    seconds = float(re.search(r"Average number of seconds to run all queries: ([\d.]+)", out).group(1))
    return queries / seconds


def redis_benchmark(db, requests, connections):
    out = subprocess.run(["taskset", "-c", "1", "redis-benchmark", "-h", "127.0.0.1", "-p", str(db.redis_port),
                          "-c", str(connections), "-n", str(requests), "-P", "2", "--threads", "1", "-q", "--csv",
                          "HMGET", "item:1", "name", "price"], capture_output=True, text=True, check=True).stdout
    row = [l for l in out.splitlines() if l.startswith('"HMGET')][0]
    return float(row.split('","')[1]) / 2  # two HMGET (rows) per pipelined round trip


def spread(values, fmt="{:.0f}"):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}..{fmt.format(max(values))})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=int, default=10, help="seconds per measured run (the original experiment's 10)")
    ap.add_argument("--connections", type=int, default=100, help="the original experiment's 100")
    ap.add_argument("--bin", help="a built sb-db-read (default: build it)")
    ap.add_argument("--out", help="also write the report here")
    ap.add_argument("--pool", type=int, help="connections per pool (default: the contestant's choice from the cores)")
    ap.add_argument("--drivers", help="comma-separated subset of the drivers (default: all eight)")
    args = ap.parse_args()
    global DRIVERS
    if args.drivers:
        wanted = args.drivers.split(",")
        unknown = set(wanted) - {d for d, _ in DRIVERS}
        if unknown:
            sys.exit(f"unknown drivers {sorted(unknown)}; the drivers: {', '.join(d for d, _ in DRIVERS)}")
        DRIVERS = [d for d in DRIVERS if d[0] in wanted]
    for tool in ["wrk", "pgbench", "mariadb-slap", "redis-benchmark", "taskset", "psql", "mariadb"]:
        need(tool)
    if (os.cpu_count() or 1) < 2:
        sys.exit("needs two cores: the contestant on core 0, the load on core 1")
    binary = args.bin or build()
    load_before = os.getloadavg()
    tmp = tempfile.mkdtemp(prefix="stackbench-bench-dbread-")
    if is_root():
        os.chmod(tmp, 0o755)
    db = Databases(tmp)
    proc = None
    try:
        log("starting private PostgreSQL, MariaDB and Redis")
        db.start()
        proc, port, lines = start_contestant(binary, db.urls(), os.path.join(tmp, "items.sqlite3"), args.pool)
        log("\n".join(lines))
        check_answers(port)
        script = os.path.join(tmp, "two-rows.sql")
        with open(script, "w") as f:
            f.write("\\set a 1\n\\set b 2\nSELECT id, name, price FROM items WHERE id IN (:a, :b);\n")
        runs = {d: [] for d, _ in DRIVERS}
        anchors = {"pg": [], "mysql": [], "redis": []}
        for rep in range(args.reps):
            for driver, _ in DRIVERS:
                url = f"http://127.0.0.1:{port}/db/{driver}?a=1&b=2"
                wrk(url, 2, args.connections)  # warm-up: pools full, statements prepared
                r = wrk(url, args.duration, args.connections)
                runs[driver].append(r)
                log(f"rep {rep + 1} {driver:17} {r['rps']:9.0f} req/s  p50 {r['p50']:.2f} ms  p99 {r['p99']:.2f} ms  non-2xx {r['non2xx']}")
            used = {kind for _, kind in DRIVERS}
            if "pg" in used:
                pgbench(db, 2, args.connections, script)  # warm-up
                anchors["pg"].append(pgbench(db, args.duration, args.connections, script))
            # mariadb-slap and redis-benchmark take a count, not a time: a short run sizes
            # the measured one to about --duration seconds (and warms up).
            if "mysql" in used:
                rate = mariadb_slap(db, 100 * args.connections, args.connections)
                anchors["mysql"].append(mariadb_slap(db, int(rate * args.duration), args.connections))
            if "redis" in used:
                rate = redis_benchmark(db, 1000 * args.connections, args.connections)
                anchors["redis"].append(redis_benchmark(db, int(rate * 2 * args.duration), args.connections))
            log(f"rep {rep + 1} anchors: " + ", ".join(f"{k} {v[-1]:.0f}/s" for k, v in anchors.items() if v))
    finally:
        if proc:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
        db.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    load_after = os.getloadavg()
    report(args, runs, anchors, lines, load_before, load_after)


def report(args, runs, anchors, lines, load_before, load_after):
    anchor_name = {"pg": "pgbench", "mysql": "mariadb-slap", "redis": "redis-benchmark"}
    out = []
    out.append(f"db-read, {args.reps} repetitions x {args.duration} s per driver, {args.connections} connections "
               f"(wrk -t1), GET /db/<driver>?a=1&b=2; sb-db-read on core 0, load and anchors on core 1, "
               f"databases unpinned. Load average before {load_before[0]:.1f}, after {load_after[0]:.1f}.")
    pools = [l.strip() for l in lines if "pool sizes" in l]
    if pools:
        out.append(f"Pools: {pools[0]}")
    out.append("")
    out.append("| driver | req/s median (min..max) | p50 ms | p99 ms | non-2xx | anchor | driver / anchor, median (min..max) |")
    out.append("|---|---|---|---|---|---|---|")
    for driver, db in DRIVERS:
        rs = runs[driver]
        rps = [r["rps"] for r in rs]
        ratio = "n/a (embedded)"
        anchor = "—"
        if db:
            anchor = f"{anchor_name[db]} {statistics.median(anchors[db]):.0f}/s"
            ratio = spread([r["rps"] / a for r, a in zip(rs, anchors[db])], "{:.2f}")
        out.append(f"| {driver} | {spread(rps)} | {statistics.median(r['p50'] for r in rs):.2f} | "
                   f"{statistics.median(r['p99'] for r in rs):.2f} | {sum(r['non2xx'] for r in rs)} | {anchor} | {ratio} |")
    out.append("")

    def cost(over, under):
        if over not in runs or under not in runs:
            return "not measured"
        per_rep = [1 - a["rps"] / b["rps"] for a, b in zip(runs[over], runs[under])]
        return f"{statistics.median(per_rep) * 100:+.0f}% (min {min(per_rep) * 100:+.0f}%, max {max(per_rep) * 100:+.0f}%)"

    out.append("The seed: \"using Ecto costs about 15% as compared to using the raw drivers\". Here, the cost in "
               "requests per second (1 - layer / under it, per repetition):")
    out.append("")
    out.append(f"- SeaORM over sqlx, PostgreSQL: {cost('sea-orm-postgres', 'sqlx-postgres')}")
    out.append(f"- SeaORM over sqlx, MySQL/MariaDB: {cost('sea-orm-mysql', 'sqlx-mysql')}")
    out.append(f"- sqlx over tokio-postgres: {cost('sqlx-postgres', 'tokio-postgres')}")
    out.append(f"- sqlx over mysql_async: {cost('sqlx-mysql', 'mysql-async')}")
    out.append(f"- SeaORM over tokio-postgres: {cost('sea-orm-postgres', 'tokio-postgres')}")
    out.append(f"- SeaORM over mysql_async: {cost('sea-orm-mysql', 'mysql-async')}")
    text = "\n".join(out)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()

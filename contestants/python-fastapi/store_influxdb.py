"""Event-log on InfluxDB 1.x over its HTTP API, with one aiohttp ClientSession
(a keep-alive connection pool) per worker process.

INFLUXDB_URL (default http://127.0.0.1:8086) and INFLUXDB_DB (default
stackbench_py_fastapi), created on first use. The event is one point in
line protocol, `events,type=T,source=S value=V <ns>`, POSTed to /write with
precision=ns (InfluxDB answers 204 once the point is in its WAL, fsynced with
the default wal-fsync-delay 0s); then the count is InfluxQL
`SELECT COUNT(value) FROM events` on /query: the original experiment's
algorithm (parse, build the point, write, count, answer)."""

import asyncio
import itertools
import json
import os

import aiohttp

from stores import Unavailable, Unstorable

# The last millisecond InfluxDB can store: its nanoseconds are an int64 (they
# end in 2262-04-11), and a write adds up to 999,999 ns to the millisecond.
MAX_TIMESTAMP_MS = (2 ** 63 - 2) // 1_000_000 - 1
COUNT = "SELECT COUNT(value) FROM events"


class InfluxStore:
    def __init__(self):
        self.base = os.environ.get("INFLUXDB_URL", "http://127.0.0.1:8086").rstrip("/")
        self.db = os.environ.get("INFLUXDB_DB", "stackbench_py_fastapi")
        self.label = f"InfluxDB at {self.base}/{self.db}"
        self.session = None
        self.created = False
        # InfluxDB keeps one point per (measurement, tag set, timestamp): two
        # events with the same type, source and millisecond would overwrite
        # each other, and the count would be short. Each write gets its own
        # nanosecond offset within its millisecond: the worker's pid (mod
        # 1000) in the upper three digits, a per-process counter (mod 1000)
        # in the lower three, so offsets are distinct within a worker and
        # across uvicorn's worker processes.
        self.sequence = itertools.count()
        self.pid_slot = (os.getpid() % 1000) * 1000

    async def start(self):
        self.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=5, connect=2),
            connector=aiohttp.TCPConnector(limit=100, ttl_dns_cache=None))
        try:
            await self._create()
        except Unavailable:
            pass  # answered with 503 until InfluxDB is there; retried on each request

    async def close(self):
        if self.session is not None:
            await self.session.close()

    def _fail(self, what):
        return Unavailable(f"{self.label} failed ({what}); retry later")

    async def _query(self, q, method="GET"):
        try:
            async with self.session.request(method, self.base + "/query", params={"db": self.db, "q": q}) as r:
                text = await r.text()
                status = r.status
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as e:
            raise self._fail(f"{type(e).__name__}: {e}") from None
        try:
            answer = json.loads(text)
        except ValueError:
            raise self._fail(f"HTTP {status}, not JSON: {text[:200]}") from None
        err = answer.get("error") or (answer.get("results") or [{}])[0].get("error")
        if err or status != 200:
            raise self._fail(err or f"HTTP {status}")
        return answer

    async def _create(self):
        if not self.created:
            await self._query(f'CREATE DATABASE "{self.db}"', "POST")  # idempotent in InfluxDB 1.x
            self.created = True

    async def _count(self):
        answer = await self._query(COUNT)
        series = answer["results"][0].get("series")  # none while the measurement is empty
        return series[0]["values"][0][1] if series else 0

    async def append(self, kind, source, value, ts):
        if ts > MAX_TIMESTAMP_MS:
            raise Unstorable("InfluxDB cannot store times after 2262-04-11: field `timestamp` must be at most "
                             f"{MAX_TIMESTAMP_MS} with this store, got {ts}")
        await self._create()
        ns = ts * 1_000_000 + self.pid_slot + next(self.sequence) % 1000
        # type and source are [A-Za-z0-9_.:-]: nothing to escape in line protocol.
        line = f"events,type={kind},source={source} value={value!r} {ns}"
        try:
            async with self.session.post(self.base + "/write", params={"db": self.db, "precision": "ns"},
                                         data=line.encode()) as r:
                status, text = r.status, await r.text()
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as e:
            raise self._fail(f"{type(e).__name__}: {e}") from None
        if status != 204:
            raise self._fail(f"the write got HTTP {status}: {text.strip()[:200]}")
        return await self._count()

    async def count(self):
        await self._create()
        return await self._count()

    async def reset(self):
        await self.start()
        await self._create()
        await self._query("DROP MEASUREMENT events", "POST")

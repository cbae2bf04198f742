"""Event-log on PostgreSQL with an asyncpg pool per uvicorn worker process.

POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres) and
POSTGRES_TABLE (default py_fastapi_events), created on first use (the workers
take turns on an advisory lock: CREATE TABLE IF NOT EXISTS alone does not
serialize them). Each event: INSERT then SELECT COUNT(*) in one transaction,
as asyncpg prepared statements (its statement cache). Pool size: the Rust
reference's event-log rule, 4 connections per core this process may use, at
least 8, split over the workers; connections are opened on demand, and 2 s
to get one (else 503)."""

import asyncio
import os
import re

import asyncpg

from stores import Unavailable, cores

ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, asyncio.TimeoutError)


def pool_size():
    n = cores()
    workers = int(os.environ.get("WORKERS") or n)
    total = max(8, 4 * n)
    return max(1, -(-total // workers))


class PostgresStore:
    def __init__(self):
        self.url = os.environ.get("POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
        self.table = os.environ.get("POSTGRES_TABLE", "py_fastapi_events")
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", self.table):
            raise SystemExit(f"POSTGRES_TABLE must be a lower-case SQL name, got {self.table!r}")
        self.label = f"PostgreSQL at {self.url.rsplit('@', 1)[-1]}, table {self.table}"
        self.insert = f"INSERT INTO {self.table} (type, source, value, ts_ms) VALUES ($1, $2, $3, $4)"
        self.count_sql = f"SELECT COUNT(*) FROM {self.table}"
        self.pool = None
        self.created = False

    async def start(self):
        # min_size=0: nothing is opened at start, so the worker starts (and
        # answers 503) while PostgreSQL is down, and reconnects when it is back.
        self.pool = await asyncpg.create_pool(self.url, min_size=0, max_size=pool_size(), timeout=2,
                                              command_timeout=5)

    async def close(self):
        if self.pool is not None:
            await asyncio.wait_for(self.pool.close(), 3)

    def _fail(self, e):
        return Unavailable(f"{self.label} failed ({type(e).__name__}: {str(e).strip()[:300]}); retry later")

    async def _create(self, conn):
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", self.table)
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table} (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                "type TEXT NOT NULL, source TEXT NOT NULL, value DOUBLE PRECISION NOT NULL, ts_ms BIGINT NOT NULL)")
        self.created = True

    async def append(self, kind, source, value, ts):
        try:
            async with self.pool.acquire(timeout=2) as conn:
                if not self.created:
                    await self._create(conn)
                async with conn.transaction():
                    await conn.execute(self.insert, kind, source, value, ts)
                    return await conn.fetchval(self.count_sql)
        except ERRORS as e:
            raise self._fail(e) from None

    async def count(self):
        try:
            async with self.pool.acquire(timeout=2) as conn:
                if not self.created:
                    await self._create(conn)
                return await conn.fetchval(self.count_sql)
        except ERRORS as e:
            raise self._fail(e) from None

    async def reset(self):
        conn = await asyncpg.connect(self.url, timeout=5)
        try:
            await conn.execute(f"DROP TABLE IF EXISTS {self.table}")
        finally:
            await conn.close()

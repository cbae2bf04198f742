"""The drivers of the Python db-read contestant: each reads rows a and b of
table `items` (or Redis hashes item:<id>) in one round trip where the driver
allows it, as the people who use that driver write it.

| name         | database      | layer                                                        |
|--------------|---------------|--------------------------------------------------------------|
| `psycopg`    | PostgreSQL    | psycopg 3 AsyncConnectionPool, server-side prepared statement |
| `asyncpg`    | PostgreSQL    | asyncpg pool (its statement cache prepares the query)         |
| `sqlalchemy` | PostgreSQL    | SQLAlchemy 2 ORM (AsyncSession) over psycopg 3                |
| `pymysql`    | MySQL/MariaDB | PyMySQL (synchronous) in a thread pool, a connection per thread |
| `redis`      | Redis         | redis-py asyncio with hiredis, one pipeline of two HMGET      |

Pool sizes (pool_sizes): the Rust reference contestant's rule, 16 connections
per core this process may use, at most 30 per pool; Redis one connection per
core. A pool's connections are shared out over the uvicorn worker processes
(a pool of 30 on two workers is 15 in each), so the rule bounds the whole
process tree, not each worker. Connections are opened on demand, so a driver
that is not asked holds none."""

import asyncio
import importlib
import os
import threading
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

SQL_PG = "SELECT id, name, price FROM items WHERE id IN (%s, %s) ORDER BY id"
SQL_PG_NUMBERED = "SELECT id, name, price FROM items WHERE id IN ($1, $2) ORDER BY id"
SQL_MYSQL = "SELECT id, name, price FROM items WHERE id IN (%s, %s) ORDER BY id"


class FetchError(Exception):
    """The database is unreachable, timed out or failed: a 503."""


def cores():
    """The CPUs this process may run on (its affinity, which stackbench's `cpus` pins)."""
    return len(os.sched_getaffinity(0))


def workers():
    return int(os.environ.get("WORKERS") or cores())


def pool_sizes():
    """(SQL pool size, Redis connections) of the whole server, and of one worker."""
    n = cores()
    sql_total = min(16 * n, 30)
    redis_total = n
    w = workers()
    return sql_total, redis_total, max(1, sql_total // w), max(1, redis_total // w)


def describe_pool(total, per_worker, what="connections"):
    w = workers()
    if w == 1:
        return f"{total} {what}"
    return f"{per_worker * w} {what} ({per_worker} in each of {w} worker processes)"


def import_all(names):
    for name in names:
        importlib.import_module(name)


class Driver:
    name = database = layer = ""
    # What `start` imports (imported on a thread first, by `ready`).
    modules = ()

    def __init__(self, url):
        self.url = url
        sql_total, redis_total, self.sql_size, self.redis_size = pool_sizes()
        self.pool = describe_pool(sql_total, self.sql_size)
        self.started = False
        self.start_lock = asyncio.Lock()

    async def start(self):
        """Imports the driver's library and makes its pool (called once, on first use)."""

    async def close(self):
        pass

    async def ready(self):
        """Starts the driver on its first request, so that a server given
        POSTGRES_URL imports only the PostgreSQL libraries it is asked to use.
        The imports run on a thread first: an import runs on the thread that
        asks for it, and SQLAlchemy's or psycopg's takes a second or more on a
        busy machine, during which the event loop would answer nothing, not
        even the 503 due at the read's deadline (app.within); `start` then
        finds them imported."""
        if not self.started:
            async with self.start_lock:
                if not self.started:
                    await asyncio.to_thread(import_all, self.modules)
                    await self.start()
                    self.started = True

    async def fetch(self, a, b):
        """[(id, name, price), ...] of the ids that have a row (a <= b; at most two)."""
        raise NotImplementedError

    def fail(self, e):
        if isinstance(e, TimeoutError):
            text = "timed out"
        else:
            text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return FetchError(f"{self.name} cannot read from {self.database}: {text}")


class PsycopgDriver(Driver):
    name, database = "psycopg", "PostgreSQL"
    modules = ("psycopg", "psycopg_pool")
    layer = "psycopg 3 AsyncConnectionPool, server-side prepared statement"

    async def start(self):
        import psycopg
        import psycopg_pool

        self.errors = (psycopg.Error, psycopg_pool.PoolTimeout, OSError)
        # min_size=0: connections are opened on demand (none while nobody
        # asks), broken ones dropped and replaced. reconnect_timeout=2: a
        # connection attempt that keeps failing is given up after 2 s (instead
        # of retrying with a backoff growing for 5 minutes), so the next
        # request starts a fresh attempt and a database that is back is used
        # within a second.
        self.pg_pool = psycopg_pool.AsyncConnectionPool(
            self.url, min_size=0, max_size=self.sql_size, timeout=2, max_idle=60, reconnect_timeout=2,
            open=False, kwargs={"autocommit": True, "connect_timeout": 1})
        await self.pg_pool.open(wait=False)

    async def close(self):
        await self.pg_pool.close(timeout=2)

    async def fetch(self, a, b):
        try:
            async with self.pg_pool.connection() as conn:
                cur = await conn.execute(SQL_PG, (a, b), prepare=True)
                return await cur.fetchall()
        except self.errors as e:
            raise self.fail(e) from None


class AsyncpgDriver(Driver):
    name, database = "asyncpg", "PostgreSQL"
    modules = ("asyncpg",)
    layer = "asyncpg pool, its statement cache (prepared statement)"

    async def start(self):
        import asyncpg

        self.errors = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, asyncio.TimeoutError)
        # min_size=0: nothing is opened at start (the server starts while the
        # database is down); connections are opened on demand and reopened
        # after a failure.
        self.pg_pool = await asyncpg.create_pool(self.url, min_size=0, max_size=self.sql_size, timeout=1,
                                                 max_inactive_connection_lifetime=60)

    async def close(self):
        await asyncio.wait_for(self.pg_pool.close(), 2)

    async def fetch(self, a, b):
        try:
            return await self.pg_pool.fetch(SQL_PG_NUMBERED, a, b, timeout=2)
        except self.errors as e:
            raise self.fail(e) from None


class SQLAlchemyDriver(Driver):
    name, database = "sqlalchemy", "PostgreSQL"
    modules = ("sqlalchemy", "sqlalchemy.exc", "sqlalchemy.ext.asyncio", "models")
    layer = "SQLAlchemy 2 ORM, AsyncSession over psycopg 3, select(Item).where(Item.id.in_(...))"

    async def start(self):
        import sqlalchemy.exc
        from sqlalchemy import select
        from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

        from models import Item

        self.Item, self.select = Item, select
        self.errors = (sqlalchemy.exc.SQLAlchemyError, OSError)
        url = "postgresql+psycopg://" + self.url.split("://", 1)[1]
        # SQLAlchemy's QueuePool, connections opened on demand; a disconnect
        # error invalidates the pool, so the next checkout reconnects.
        self.engine = create_async_engine(url, pool_size=self.sql_size, max_overflow=0, pool_timeout=2,
                                          connect_args={"connect_timeout": 1})
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)

    async def close(self):
        await asyncio.wait_for(self.engine.dispose(), 2)

    async def fetch(self, a, b):
        Item = self.Item
        try:
            async with self.sessions() as session:
                items = await session.scalars(self.select(Item).where(Item.id.in_([a, b])).order_by(Item.id))
                return [(i.id, i.name, i.price) for i in items]
        except self.errors as e:
            raise self.fail(e) from None


class PyMySQLDriver(Driver):
    name, database = "pymysql", "MySQL/MariaDB"
    modules = ("pymysql",)
    layer = "PyMySQL (synchronous) in a thread pool, one connection per thread"

    async def start(self):
        import pymysql

        self.pymysql = pymysql
        u = urllib.parse.urlsplit(self.url)
        self.connect_args = dict(
            host=u.hostname or "127.0.0.1", port=u.port or 3306,
            user=urllib.parse.unquote(u.username or "root"), password=urllib.parse.unquote(u.password or ""),
            database=u.path.lstrip("/") or None, autocommit=True,
            connect_timeout=1, read_timeout=2, write_timeout=2)
        # As many threads as the pool has connections: each thread keeps its
        # own connection (opened on its first request, reopened after an error).
        self.executor = ThreadPoolExecutor(self.sql_size, thread_name_prefix="pymysql")
        self.local = threading.local()

    async def close(self):
        self.executor.shutdown(wait=False, cancel_futures=True)

    def _fetch(self, a, b):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = self.pymysql.connect(**self.connect_args)
        try:
            with conn.cursor() as cur:
                cur.execute(SQL_MYSQL, (a, b))
                return cur.fetchall()
        except BaseException:
            self.local.conn = None
            try:
                conn.close()
            except Exception:
                pass
            raise

    async def fetch(self, a, b):
        try:
            return await asyncio.get_running_loop().run_in_executor(self.executor, self._fetch, a, b)
        except (self.pymysql.MySQLError, OSError) as e:
            raise self.fail(e) from None


class RedisDriver(Driver):
    name, database = "redis", "Redis"
    modules = ("redis.asyncio", "redis.exceptions", "redis.asyncio.retry", "redis.backoff")
    layer = "redis-py asyncio with hiredis, one pipeline of two HMGET"

    def __init__(self, url):
        super().__init__(url)
        self.pool = describe_pool(pool_sizes()[1], self.redis_size, "connection(s)")

    async def start(self):
        import redis.asyncio as aioredis
        import redis.exceptions
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        self.errors = (redis.exceptions.RedisError, OSError)
        # A blocking pool: a request waits (at most 2 s) for the connection
        # instead of failing with "too many connections". One retry, at once:
        # a connection the server closed (a restart) is reopened on the spot.
        self.redis_pool = aioredis.BlockingConnectionPool.from_url(
            self.url, max_connections=self.redis_size, timeout=2, decode_responses=True,
            socket_connect_timeout=1, socket_timeout=2, retry=Retry(NoBackoff(), 1))
        self.client = aioredis.Redis(connection_pool=self.redis_pool)

    async def close(self):
        await asyncio.wait_for(self.client.aclose(close_connection_pool=True), 2)

    async def fetch(self, a, b):
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.hmget(f"item:{a}", "name", "price")
                pipe.hmget(f"item:{b}", "name", "price")
                first, second = await pipe.execute()
        except self.errors as e:
            raise self.fail(e) from None
        return [(i, name, int(price)) for i, (name, price) in ((a, first), (b, second)) if name is not None]


# In the order GET /db lists them; each with the variable that enables it.
DRIVERS = [
    ("POSTGRES_URL", PsycopgDriver),
    ("POSTGRES_URL", AsyncpgDriver),
    ("POSTGRES_URL", SQLAlchemyDriver),
    ("MYSQL_URL", PyMySQLDriver),
    ("REDIS_URL", RedisDriver),
]
ALL_NAMES = [cls.name for _, cls in DRIVERS]
VARIABLE = {cls.name: var for var, cls in DRIVERS}


def configured():
    """The drivers whose database the environment gives."""
    return [cls(os.environ[var]) for var, cls in DRIVERS if os.environ.get(var)]

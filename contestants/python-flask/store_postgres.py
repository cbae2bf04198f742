"""Event-log on PostgreSQL with psycopg 3 and psycopg_pool: see stores.py."""

import re
import threading
import urllib.parse
import os

import psycopg
import psycopg_pool
from psycopg import sql

from stores import Unavailable


class PostgresStore:
    def __init__(self, pool_size):
        self.url = os.environ.get("POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
        self.table = os.environ.get("POSTGRES_TABLE", "py_flask_events")
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", self.table):
            raise SystemExit(f"POSTGRES_TABLE must be a lower-case SQL name, got {self.table!r}")
        self.label = f"PostgreSQL at {urllib.parse.urlsplit(self.url).hostname}, table {self.table}"
        self.pool_size = pool_size
        self.pool = None
        self.lock = threading.Lock()
        self.created = False

    def _connection(self):
        """A pooled connection (a context manager: one transaction, committed
        at its end, rolled back on an error); the table is created first."""
        with self.lock:
            if self.pool is None:
                # Opened in the worker process (after gunicorn's fork); it
                # connects in the background and reconnects after a failure.
                self.pool = psycopg_pool.ConnectionPool(self.url, min_size=self.pool_size, max_size=self.pool_size,
                                                        timeout=2, kwargs={"connect_timeout": 2}, open=True)
        if not self.created:
            with self.pool.connection() as conn:
                # Workers starting together take turns: CREATE TABLE IF NOT
                # EXISTS alone does not serialize them.
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.table,))
                conn.execute(sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                    "type TEXT NOT NULL, source TEXT NOT NULL, value DOUBLE PRECISION NOT NULL, "
                    "ts_ms BIGINT NOT NULL)").format(sql.Identifier(self.table)))
            self.created = True
        return self.pool.connection()

    def _fail(self, e):
        return Unavailable(f"{self.label} failed ({type(e).__name__}: {str(e).strip()[:300]}); retry later")

    def append(self, kind, source, value, ts):
        try:
            # One transaction: committed when the block ends, rolled back on error.
            with self._connection() as conn:
                conn.execute(f"INSERT INTO {self.table} (type, source, value, ts_ms) VALUES (%s, %s, %s, %s)",
                             (kind, source, value, ts))
                (count,) = conn.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()
            return count
        except (psycopg.Error, psycopg_pool.PoolTimeout) as e:
            raise self._fail(e) from None

    def count(self):
        try:
            with self._connection() as conn:
                (count,) = conn.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()
            return count
        except (psycopg.Error, psycopg_pool.PoolTimeout) as e:
            raise self._fail(e) from None

    def reset(self):
        with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {self.table}")

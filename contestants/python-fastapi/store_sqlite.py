"""Event-log on SQLite with Python's own sqlite3, in a thread pool.

Each event's BEGIN IMMEDIATE, INSERT, COUNT(*) and COMMIT run as one blocking
function on a thread of a small pool (asyncio's run_in_executor), each
thread with its own connection, so the event loop never blocks on the file
and no other request's statement can land inside the transaction (which a
shared aiosqlite connection would allow without a lock of its own). WAL mode,
synchronous=FULL: an acknowledged event survives a SIGKILL. EVENTS_DB
(default events.db)."""

import asyncio
import os
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

from stores import Unavailable

THREADS = 4  # per worker process; SQLite serializes the writes anyway


class SQLiteStore:
    def __init__(self):
        self.path = os.environ.get("EVENTS_DB", "events.db")
        self.local = threading.local()
        self.executor = None

    async def start(self):
        self.executor = ThreadPoolExecutor(THREADS, thread_name_prefix="sqlite")

    async def close(self):
        if self.executor is not None:
            self.executor.shutdown(wait=True)

    def _conn(self):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("CREATE TABLE IF NOT EXISTS events (type TEXT NOT NULL, source TEXT NOT NULL, "
                         "value REAL NOT NULL, timestamp INTEGER NOT NULL)")
            self.local.conn = conn
        return conn

    def _append(self, kind, source, value, ts):
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("INSERT INTO events VALUES (?, ?, ?, ?)", (kind, source, value, ts))
            (count,) = conn.execute("SELECT COUNT(*) FROM events").fetchone()
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return count

    def _count(self):
        (count,) = self._conn().execute("SELECT COUNT(*) FROM events").fetchone()
        return count

    async def _run(self, fn, *args):
        try:
            return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)
        except sqlite3.Error as e:
            raise Unavailable(f"the SQLite store {self.path} failed ({e}); retry later") from None

    async def append(self, kind, source, value, ts):
        return await self._run(self._append, kind, source, value, ts)

    async def count(self):
        return await self._run(self._count)

    async def reset(self):
        for suffix in ("", "-wal", "-shm"):
            try:
                os.remove(self.path + suffix)
            except FileNotFoundError:
                pass

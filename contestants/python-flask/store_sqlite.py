"""Event-log on SQLite: see stores.py."""

import os
import sqlite3
import threading

from stores import Unavailable


class SQLiteStore:
    def __init__(self):
        self.path = os.environ.get("EVENTS_DB", "events.db")
        self.local = threading.local()

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

    def append(self, kind, source, value, ts):
        try:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("INSERT INTO events VALUES (?, ?, ?, ?)", (kind, source, value, ts))
                (count,) = conn.execute("SELECT COUNT(*) FROM events").fetchone()
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise Unavailable(f"the SQLite store {self.path} failed ({e}); retry later") from None
        return count

    def count(self):
        try:
            (count,) = self._conn().execute("SELECT COUNT(*) FROM events").fetchone()
        except sqlite3.Error as e:
            raise Unavailable(f"the SQLite store {self.path} failed ({e}); retry later") from None
        return count

    def reset(self):
        for suffix in ("", "-wal", "-shm"):
            try:
                os.remove(self.path + suffix)
            except FileNotFoundError:
                pass

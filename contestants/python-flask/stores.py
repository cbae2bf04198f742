"""The event-log stores of the Flask contestant, chosen by STORE (run.sh):

- `sqlite` (default): the file EVENTS_DB (default events.db), one connection
  per thread, each write and its count in one transaction (WAL mode,
  synchronous=FULL: an acknowledged event survives a SIGKILL).
- `influxdb`: InfluxDB 1.x through the `influxdb` PyPI client (the official
  1.x client, on requests), one client per thread. INFLUXDB_URL (default
  http://127.0.0.1:8086) and INFLUXDB_DB (default stackbench_py_flask),
  created on first use. The event is one point of measurement `events`, tags
  `type` and `source`, field `value`; the count is InfluxQL
  `SELECT COUNT(value) FROM events` after the acknowledged write.
- `postgres`: PostgreSQL through psycopg 3 and a psycopg_pool ConnectionPool
  per worker process, as many connections as the worker has threads.
  POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres) and
  POSTGRES_TABLE (default py_flask_events), created on first use. The
  INSERT and the COUNT(*) run in one transaction.

Every store has append(kind, source, value, ts_ms) -> count, count() and
reset(); failures raise Unavailable (503) or Unstorable (400)."""

import os

STORE = os.environ.get("STORE", "sqlite")
STORES = ("sqlite", "influxdb", "postgres")


class Unavailable(Exception):
    """The store cannot be reached or failed: a 503, nothing acknowledged."""


class Unstorable(Exception):
    """A valid event this store cannot hold: a 400."""


def open_store(threads=1):
    """The store STORE names; only its own client library is imported."""
    if STORE == "sqlite":
        from store_sqlite import SQLiteStore
        return SQLiteStore()
    if STORE == "influxdb":
        from store_influxdb import InfluxStore
        return InfluxStore()
    if STORE == "postgres":
        from store_postgres import PostgresStore
        return PostgresStore(threads)
    raise SystemExit(f"STORE must be one of {', '.join(STORES)}, got {STORE!r}")

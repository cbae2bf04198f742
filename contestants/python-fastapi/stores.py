"""The event-log stores of the FastAPI contestant, chosen by STORE (run.sh).
Each is made once per uvicorn worker process (in the app's lifespan) and has
`await start()`, `await append(kind, source, value, ts_ms) -> count`,
`await count()`, `await reset()` and `await close()`; failures raise
Unavailable (503) or Unstorable (400).

- `influxdb`: InfluxDB 1.x over its HTTP API with aiohttp (store_influxdb.py).
- `postgres`: PostgreSQL with an asyncpg pool (store_postgres.py).
- `sqlite`: Python's sqlite3 in a thread pool (store_sqlite.py).

Only the chosen store's client library is imported."""

import os

STORE = os.environ.get("STORE", "sqlite")
STORES = ("influxdb", "postgres", "sqlite")


class Unavailable(Exception):
    """The store cannot be reached or failed: a 503, nothing acknowledged."""


class Unstorable(Exception):
    """A valid event this store cannot hold: a 400."""


def open_store():
    if STORE == "influxdb":
        from store_influxdb import InfluxStore
        return InfluxStore()
    if STORE == "postgres":
        from store_postgres import PostgresStore
        return PostgresStore()
    if STORE == "sqlite":
        from store_sqlite import SQLiteStore
        return SQLiteStore()
    raise SystemExit(f"STORE must be one of {', '.join(STORES)}, got {STORE!r}")


def cores():
    """The CPUs this process may run on (its affinity, which stackbench's `cpus` pins)."""
    return len(os.sched_getaffinity(0))


async def reset():
    """reset.sh: empty the store the environment names."""
    store = open_store()
    try:
        await store.reset()
    finally:
        await store.close()

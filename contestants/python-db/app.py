"""The `db-read` scenario of stackbench on Starlette, served by uvicorn
(serve.py): one process serving several Python database drivers side by side,
as the Rust `sb-db-read` does (drivers.py).

    GET /db                     the drivers served: {"drivers": [{"name", "database", "layer", "pool"}]}
    GET /db/<driver>?a=<id>&b=<id>   rows a and b (defaults 1 and 2), ordered by id

Errors, as docs/scenarios.md says and with the reference's messages: an
unknown driver 404 (listing the served ones), an id that is not an integer in
1..=2^31-1 400, an id with no row 404, the database unreachable 503 (within
DB_TIMEOUT, default 1.5 s), unknown paths 404, wrong methods 405 with Allow.
The drivers served are exactly those whose database the environment gives:
POSTGRES_URL (psycopg, asyncpg, sqlalchemy), MYSQL_URL (pymysql), REDIS_URL
(redis)."""

import asyncio
import json
import os
import sys
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Route

import drivers as drv

MAX_ID = 2 ** 31 - 1
ROWS = 10_000
TIMEOUT = float(os.environ.get("DB_TIMEOUT") or 1.5)
ROUTES = "GET /db, GET /db/{driver}?a=<id>&b=<id>"
ALLOW = "GET, HEAD"


def json_response(status, payload, headers=None):
    return Response(json.dumps(payload, separators=(",", ":")), status_code=status,
                    media_type="application/json", headers=headers)


def error(status, message, headers=None):
    return json_response(status, {"error": message}, headers)


class BadId(Exception):
    pass


def parse_id(param, value):
    if not value or not value.isascii() or not value.isdigit():
        raise BadId(f"query parameter `{param}` must be an integer in 1..=2147483647, got {json.dumps(value)}")
    n = int(value)
    if not 1 <= n <= MAX_ID:
        raise BadId(f"query parameter `{param}` must be an integer in 1..=2147483647, got {json.dumps(value)}")
    return n


def parse_ids(query):
    """(a, b) from the raw query string, as the reference reads it: no
    percent-decoding (an id is digits only), other parameters ignored, a or b
    given twice refused."""
    ids = {}
    for pair in query.split("&"):
        if not pair:
            continue
        key, _, value = pair.partition("=")
        if key in ("a", "b"):
            if key in ids:
                raise BadId(f"query parameter `{key}` appears more than once; send it once")
            ids[key] = parse_id(key, value)
    return ids.get("a", 1), ids.get("b", 2)


@asynccontextmanager
async def lifespan(app):
    served = drv.configured()
    if not served:
        sys.exit("app.py: no database given; set POSTGRES_URL, MYSQL_URL and/or REDIS_URL")
    app.state.drivers = {d.name: d for d in served}
    app.state.listing = json.dumps({"drivers": [
        {"name": d.name, "database": d.database, "layer": d.layer, "pool": d.pool} for d in served]},
        separators=(",", ":")).encode()
    try:
        yield
    finally:
        for d in served:
            if d.started:
                try:
                    await d.close()
                except Exception:
                    pass


async def list_drivers(request):
    return Response(request.app.state.listing, media_type="application/json")


async def read_rows(request):
    name = request.path_params["driver"]
    served = request.app.state.drivers
    driver = served.get(name)
    if driver is None:
        names = ", ".join(served)
        if name in drv.VARIABLE:
            return error(404, f"driver {json.dumps(name)} is not served here: start the server with "
                              f"{drv.VARIABLE[name]} set to serve it; this server serves: {names}")
        return error(404, f"unknown driver {json.dumps(name)}; this server serves: {names} "
                          f"(the drivers of this contestant: {', '.join(drv.ALL_NAMES)})")
    try:
        a, b = parse_ids(request.scope["query_string"].decode("latin-1"))
    except BadId as e:
        return error(400, str(e))
    lo, hi = min(a, b), max(a, b)
    try:
        rows = await within(TIMEOUT, read(driver, lo, hi))
    except drv.FetchError as e:
        return error(503, f"{e}; retry when the database is back")
    except TimeoutError:
        return error(503, f"{driver.name} cannot read from {driver.database}: no answer within "
                          f"{int(TIMEOUT * 1000)} ms; retry when the database is back")
    found = {row[0]: row for row in rows}
    answer = []
    for i in (lo, hi):
        row = found.get(i)
        if row is None:
            return error(404, f"no row with id {i} in items (the data set has ids 1..={ROWS}); "
                              "ask for an id that exists")
        answer.append({"id": row[0], "name": row[1], "price": row[2]})
    return json_response(200, answer)


async def read(driver, lo, hi):
    await driver.ready()
    return await driver.fetch(lo, hi)


# Reads given up at their deadline, still cancelling: held so they are not
# collected before they finish.
abandoned = set()


async def within(seconds, coro):
    """The result of `coro`, or TimeoutError at `seconds`, at once. A plain
    `asyncio.timeout` waits for the cancelled read to unwind, and psycopg and
    asyncpg unwind a cancelled query by sending PostgreSQL a cancel request and
    waiting for it: against a server that hangs, that wait outlasts the
    deadline by many seconds. The read is cancelled here and left to unwind in
    the background; the 503 goes out on time."""
    task = asyncio.ensure_future(coro)
    done, _ = await asyncio.wait((task,), timeout=seconds)
    if done:
        return task.result()
    task.cancel()
    abandoned.add(task)
    task.add_done_callback(forget)
    raise TimeoutError


def forget(task):
    abandoned.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: a read that failed while unwinding is not logged as lost


async def http_error(request, exc):
    if exc.status_code == 404:
        return error(404, f"no route for {request.method} {request.url.path}; this server answers {ROUTES}")
    if exc.status_code == 405:
        return error(405, f"{request.url.path} does not accept {request.method}; allowed: {ALLOW}",
                     {"Allow": ALLOW})
    return error(exc.status_code, str(exc.detail))


async def internal_error(request, exc):
    return error(500, f"internal error ({type(exc).__name__}); see the server's log")


app = Starlette(
    routes=[Route("/db", list_drivers, methods=["GET"]), Route("/db/{driver}", read_rows, methods=["GET"])],
    exception_handlers={HTTPException: http_error, Exception: internal_error},
    lifespan=lifespan,
)
app.router.redirect_slashes = False  # /db/ is an unknown path, not a redirect to /db

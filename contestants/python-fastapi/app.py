"""The `dummy` and `event-log` scenarios of stackbench on FastAPI, served by
uvicorn (serve.py). The contract is docs/scenarios.md: every rule below is
checked by `stackbench verify` before any measurement.

SCENARIO=dummy|event-log selects the scenario; STORE=influxdb|postgres|sqlite
the event-log store (stores.py). The event is parsed and validated by
events.py from the raw body (not by a Pydantic model: the contract's
duplicate-key rule and its messages need the raw key/value pairs); the steps
are the original experiment's: parse, write, count, answer."""

import json
import os
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from events import BadEvent, parse_event
from stores import Unavailable, Unstorable, open_store

SCENARIO = os.environ.get("SCENARIO", "dummy")
MAX_BODY = 64 * 1024
ROUTES = "POST /events, GET /events/count"
ALLOW = {"/events": "POST", "/events/count": "GET"}
COUNT_ONE = b'{"count":1}'


@asynccontextmanager
async def lifespan(app):
    # One store per worker process: its connections are opened here, in the worker.
    store = open_store() if SCENARIO == "event-log" else None
    app.state.store = store
    if store is not None:
        await store.start()
    try:
        yield
    finally:
        if store is not None:
            await store.close()


# No OpenAPI schema or docs pages in production: the contract's routes only.
app = FastAPI(lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)


def json_response(status, payload, headers=None):
    return Response(json.dumps(payload, separators=(",", ":")), status_code=status,
                    media_type="application/json", headers=headers)


def error(status, message, headers=None):
    return json_response(status, {"error": message}, headers)


def too_large():
    # The rest of the body is never read: uvicorn closes the connection after
    # this answer (Connection: close), so it is not drained either.
    return error(413, f"the request body is larger than {MAX_BODY} bytes (64 KiB); send a smaller body",
                 {"Connection": "close"})


async def read_body(request):
    """The body, or None when it is over MAX_BODY. Chunks are taken as uvicorn
    receives them (it stops reading the socket while a chunk waits), so at
    most MAX_BODY plus one chunk is ever held, whatever the client sends."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


@app.exception_handler(StarletteHTTPException)
async def http_error(request, exc):
    if exc.status_code == 404:
        return error(404, f"no route for {request.method} {request.url.path}; this server answers {ROUTES}")
    if exc.status_code == 405:
        allow = ALLOW.get(request.url.path, "GET")
        return error(405, f"{request.url.path} does not accept {request.method}; allowed: {allow}",
                     {"Allow": allow})
    return error(exc.status_code, str(exc.detail))


@app.exception_handler(Exception)
async def internal_error(request, exc):
    return error(500, f"internal error ({type(exc).__name__}); see the server's log")


@app.post("/events")
async def post_event(request: Request):
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY:
        return too_large()
    ctype = request.headers.get("content-type")
    if ctype is None:
        return error(400, "the request has no Content-Type; send Content-Type: application/json")
    if ctype.split(";", 1)[0].strip().lower() != "application/json":
        return error(400, f"Content-Type must be application/json, got {ctype!r}")
    body = await read_body(request)
    if body is None:
        return too_large()
    try:
        kind, source, value, ts = parse_event(body)
    except BadEvent as e:
        return error(400, str(e))
    store = request.app.state.store
    if store is None:
        return Response(COUNT_ONE, media_type="application/json")
    try:
        count = await store.append(kind, source, value, ts)
    except Unstorable as e:
        return error(400, str(e))
    except Unavailable as e:
        return error(503, str(e))
    return json_response(200, {"count": count})


@app.get("/events/count")
async def get_count(request: Request):
    store = request.app.state.store
    if store is None:
        return Response(COUNT_ONE, media_type="application/json")
    try:
        return json_response(200, {"count": await store.count()})
    except Unavailable as e:
        return error(503, str(e))

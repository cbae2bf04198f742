"""The `dummy` and `event-log` scenarios of stackbench on Flask (the original experiment's
Python stack), served by gunicorn (gunicorn.conf.py). The contract is
docs/scenarios.md: every rule below is checked by `stackbench verify` before
any measurement.

SCENARIO=dummy|event-log selects the scenario; STORE=sqlite|influxdb|postgres
the event-log store (stores.py). The event is parsed and validated by
events.py; the steps are the original experiment's: parse, write, count,
answer."""

import json
import os

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from events import BadEvent, parse_event
from stores import Unavailable, Unstorable, open_store

SCENARIO = os.environ.get("SCENARIO", "dummy")
MAX_BODY = 64 * 1024
ROUTES = "POST /events, GET /events/count"
ALLOW = {"/events": "POST", "/events/count": "GET"}

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
store = open_store(threads=int(os.environ.get("THREADS", "4"))) if SCENARIO == "event-log" else None


def json_response(status, payload, headers=None):
    return Response(json.dumps(payload, separators=(",", ":")), status=status,
                    mimetype="application/json", headers=headers)


def error(status, message, headers=None):
    return json_response(status, {"error": message}, headers)


def too_large():
    # The rest of the body is not read here (gunicorn discards it before the
    # next request on the connection).
    return error(413, f"the request body is larger than {MAX_BODY} bytes (64 KiB); send a smaller body")


def read_body():
    """The body, or None when it is over MAX_BODY (at most MAX_BODY + 1 bytes
    are read, whether or not it came with a Content-Length)."""
    chunks, size = [], 0
    while size <= MAX_BODY:
        chunk = request.stream.read(MAX_BODY + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return None if size > MAX_BODY else b"".join(chunks)


@app.errorhandler(HTTPException)
def http_error(e):
    if e.code == 404:
        return error(404, f"no route for {request.method} {request.path}; this server answers {ROUTES}")
    if e.code == 405:
        allow = ALLOW.get(request.path, "GET")
        return error(405, f"{request.path} does not accept {request.method}; allowed: {allow}", {"Allow": allow})
    if e.code == 413:
        return too_large()
    return error(e.code or 500, e.description or e.name)


@app.errorhandler(Exception)
def internal_error(e):
    app.logger.exception("unexpected error")
    return error(500, f"internal error ({type(e).__name__}); see the server's log")


@app.route("/events", methods=["POST"])
def post_event():
    if request.content_length is not None and request.content_length > MAX_BODY:
        return too_large()
    if request.mimetype != "application/json":
        if not request.content_type:
            return error(400, "the request has no Content-Type; send Content-Type: application/json")
        return error(400, f"Content-Type must be application/json, got {request.content_type!r}")
    body = read_body()
    if body is None:
        return too_large()
    try:
        kind, source, value, ts = parse_event(body)
    except BadEvent as e:
        return error(400, str(e))
    if store is None:
        return json_response(200, {"count": 1})
    try:
        count = store.append(kind, source, value, ts)
    except Unstorable as e:
        return error(400, str(e))
    except Unavailable as e:
        return error(503, str(e))
    return json_response(200, {"count": count})


@app.route("/events/count", methods=["GET"])
def get_count():
    if store is None:
        return json_response(200, {"count": 1})
    try:
        return json_response(200, {"count": store.count()})
    except Unavailable as e:
        return error(503, str(e))

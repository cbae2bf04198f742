"""The `dummy` and `event-log` scenarios of stackbench on Flask (the seed's
Python stack), served by gunicorn. The contract is shared/scenarios.md: every
rule below is checked by `stackbench verify` before any measurement.

SCENARIO=dummy|event-log selects the scenario; event-log writes to the SQLite
file EVENTS_DB (default events.db), one connection per thread, each write and
its count in one transaction (WAL mode, synchronous=FULL: an acknowledged
event survives a SIGKILL)."""

import json
import math
import os
import re
import sqlite3
import threading
import time

from flask import Flask, Response, request

SCENARIO = os.environ.get("SCENARIO", "dummy")
DB_PATH = os.environ.get("EVENTS_DB", "events.db")
MAX_BODY = 64 * 1024
NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
ROUTES = "POST /events, GET /events/count"

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
_local = threading.local()


def json_response(status, payload, headers=None):
    return Response(json.dumps(payload, separators=(",", ":")), status=status,
                    mimetype="application/json", headers=headers)


def error(status, message, headers=None):
    return json_response(status, {"error": message}, headers)


def db():
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(DB_PATH, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("CREATE TABLE IF NOT EXISTS events (type TEXT NOT NULL, source TEXT NOT NULL, "
                     "value REAL NOT NULL, timestamp INTEGER NOT NULL)")
        _local.conn = conn
    return conn


class BadEvent(Exception):
    pass


def reject_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise BadEvent(f"field `{key}` appears more than once; send it once")
        seen[key] = value
    return seen


def reject_constant(name):
    raise BadEvent(f"the body is not valid JSON ({name} is not JSON); send an object like {{\"type\": \"page_view\"}}")


def parse_event(body):
    try:
        event = json.loads(body, object_pairs_hook=reject_duplicates, parse_constant=reject_constant)
    except BadEvent:
        raise
    except ValueError as e:
        raise BadEvent(f"the body is not valid JSON ({e}); send an object like {{\"type\": \"page_view\"}}")
    if not isinstance(event, dict):
        raise BadEvent("the body must be a JSON object like {\"type\": \"page_view\"}")
    kind = event.get("type")
    if kind is None:
        raise BadEvent("field `type` is required: a string of 1-64 characters from A-Z a-z 0-9 _ . : -")
    for field, val in (("type", kind), ("source", event.get("source"))):
        if val is None:
            continue
        if not isinstance(val, str) or not NAME.match(val):
            raise BadEvent(f"field `{field}` must be a string of 1-64 characters from A-Z a-z 0-9 _ . : -")
    value = event.get("value")
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                              or not math.isfinite(value)):
        raise BadEvent("field `value` must be a finite number")
    ts = event.get("timestamp")
    if ts is not None and (isinstance(ts, bool) or not isinstance(ts, int) or not 0 <= ts < 2 ** 53):
        raise BadEvent("field `timestamp` must be an integer number of milliseconds, 0 <= t < 2^53")
    return (kind, event.get("source") or "unknown", float(1.0 if value is None else value),
            int(time.time() * 1000) if ts is None else ts)


@app.errorhandler(404)
def not_found(_):
    return error(404, f"no route for {request.method} {request.path}; this server answers {ROUTES}")


@app.errorhandler(405)
def method_not_allowed(_):
    allow = "POST" if request.path == "/events" else "GET"
    return error(405, f"{request.path} does not accept {request.method}; allowed: {allow}", {"Allow": allow})


@app.errorhandler(413)
def too_large(_):
    return error(413, "the request body is larger than 65536 bytes (64 KiB); send a smaller body")


@app.route("/events", methods=["POST"])
def post_event():
    if request.content_length is not None and request.content_length > MAX_BODY:
        return too_large(None)
    if request.mimetype != "application/json":
        return error(400, f"Content-Type must be application/json, got {request.content_type!r}")
    body = request.get_data(cache=False)
    try:
        kind, source, value, ts = parse_event(body)
    except BadEvent as e:
        return error(400, str(e))
    if SCENARIO == "dummy":
        return json_response(200, {"count": 1})
    try:
        conn = db()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("INSERT INTO events VALUES (?, ?, ?, ?)", (kind, source, value, ts))
            (count,) = conn.execute("SELECT COUNT(*) FROM events").fetchone()
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except sqlite3.Error as e:
        return error(503, f"the store failed ({e}); retry later")
    return json_response(200, {"count": count})


@app.route("/events/count", methods=["GET"])
def get_count():
    if SCENARIO == "dummy":
        return json_response(200, {"count": 1})
    try:
        (count,) = db().execute("SELECT COUNT(*) FROM events").fetchone()
    except sqlite3.Error as e:
        return error(503, f"the store failed ({e}); retry later")
    return json_response(200, {"count": count})

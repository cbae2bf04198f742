#!/usr/bin/env python3
"""A tiny todo service that answers scenarios/examples/todo.toml (and todo.hurl).

Python 3's standard library only, in memory, so the example runs anywhere
without a database:

    python3 scenarios/examples/todo_server.py --port 8080
    stackbench verify http://127.0.0.1:8080 --scenario-file scenarios/examples/todo.toml
    stackbench run scenarios/examples/todo-plan.toml

    POST   /todos        {"title": "..."}  201 {"id", "title", "owner", "done": false};
                                            a title of 0 or over 200 characters: 400
    GET    /todos/<id>                      200 the todo, 404 when there is none
    GET    /todos?owner=ann&limit=10        200 that owner's todos, at most `limit`
    DELETE /todos                           204, every todo gone

HTTP/1.1 with keep-alive, a thread per connection. The port comes from
--port, else the PORT environment variable, else 8080. SIGTERM stops it.
"""

import argparse
import ssl
import json
import os
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MAX_TITLE = 200


class Store:
    """The todos, behind one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.todos = {}
        self.next_id = 1

    def add(self, title, owner):
        with self.lock:
            todo = {"id": self.next_id, "title": title, "owner": owner, "done": False}
            self.todos[self.next_id] = todo
            self.next_id += 1
            return todo

    def get(self, todo_id):
        with self.lock:
            return self.todos.get(todo_id)

    def of(self, owner, limit):
        with self.lock:
            mine = [t for t in self.todos.values() if owner is None or t["owner"] == owner]
            return mine[:limit]

    def clear(self):
        with self.lock:
            self.todos.clear()


STORE = Store()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every answer carries Content-Length
    disable_nagle_algorithm = True  # headers and body are two writes: send each at once

    def answer(self, status, value=None):
        body = b"" if value is None else json.dumps(value).encode()
        self.send_response(status)
        if value is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_json(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            return json.loads(raw)
        except ValueError:
            return None

    def do_POST(self):
        url = urlsplit(self.path)
        if url.path != "/todos":
            self.read_json()
            return self.answer(404, {"error": "unknown path"})
        doc = self.read_json()
        title = doc.get("title") if isinstance(doc, dict) else None
        if not isinstance(title, str) or not 1 <= len(title) <= MAX_TITLE:
            return self.answer(400, {"error": f"`title` is a string of 1 to {MAX_TITLE} characters"})
        owner = doc.get("owner") if isinstance(doc.get("owner"), str) else "ann"
        return self.answer(201, STORE.add(title, owner))

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/todos":
            query = parse_qs(url.query)
            owner = query.get("owner", [None])[0]
            try:
                limit = int(query.get("limit", ["50"])[0])
            except ValueError:
                return self.answer(400, {"error": "`limit` is a whole number"})
            return self.answer(200, STORE.of(owner, max(limit, 0)))
        if url.path.startswith("/todos/"):
            try:
                todo = STORE.get(int(url.path[len("/todos/"):]))
            except ValueError:
                todo = None
            if todo is None:
                return self.answer(404, {"error": "no such todo"})
            return self.answer(200, todo)
        return self.answer(404, {"error": "unknown path"})

    def do_DELETE(self):
        if urlsplit(self.path).path != "/todos":
            return self.answer(404, {"error": "unknown path"})
        STORE.clear()
        return self.answer(204)

    def log_message(self, format, *args):
        pass  # one line per request would cost more than the request


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8080")))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--cert", help="serve HTTPS with this certificate (PEM), with --key")
    parser.add_argument("--key", help="the private key of --cert (PEM)")
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    scheme = "http"
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"todo server on {scheme}://{args.host}:{args.port}", flush=True)
    try:
        server.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()

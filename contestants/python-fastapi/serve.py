"""Starts the FastAPI contestant under uvicorn with its production settings
(run.sh execs this): 127.0.0.1:$PORT, one worker process per CPU this process
may use (its affinity, which stackbench's `cpus` pins; WORKERS overrides it),
uvloop and httptools, no access log, graceful stop on SIGTERM (in-flight
requests get 3 s). With TLS_CERT and TLS_KEY (PEM files, both or neither) it
serves HTTPS: uvicorn's --ssl-certfile/--ssl-keyfile, Python's ssl module on the
system's OpenSSL."""

import os
import sys

import uvicorn

from stores import cores


def tls_files():
    """uvicorn's ssl_certfile and ssl_keyfile from TLS_CERT and TLS_KEY, or {}."""
    cert, key = os.environ.get("TLS_CERT"), os.environ.get("TLS_KEY")
    if not cert and not key:
        return {}
    if not cert or not key:
        sys.exit("serve.py: set both TLS_CERT and TLS_KEY (PEM files) to serve HTTPS, or neither")
    return {"ssl_certfile": cert, "ssl_keyfile": key}


if __name__ == "__main__":
    uvicorn.run(
        "app:app",
        host="127.0.0.1",
        port=int(os.environ["PORT"]),
        workers=int(os.environ.get("WORKERS") or cores()),
        loop="uvloop",
        http="httptools",
        lifespan="on",
        access_log=False,
        log_level="warning",
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=3,
        **tls_files(),
    )

"""Starts the db-read contestant under uvicorn with its production settings
(run.sh execs this): 127.0.0.1:$PORT, one worker process per CPU this process
may use (its affinity, which stackbench's `cpus` pins; WORKERS overrides it),
uvloop and httptools, no access log, graceful stop on SIGTERM (in-flight
requests get 3 s)."""

import os

import uvicorn

from drivers import workers

if __name__ == "__main__":
    uvicorn.run(
        "app:app",
        host="127.0.0.1",
        port=int(os.environ["PORT"]),
        workers=workers(),
        loop="uvloop",
        http="httptools",
        lifespan="on",
        access_log=False,
        log_level="warning",
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=3,
    )

# gunicorn's production settings for the Flask contestant (run.sh passes this
# file with -c). Workers: gunicorn's documented rule, (2 x cores) + 1, with
# the cores this process may run on (its CPU affinity, which stackbench's
# `cpus` pins), not the machine's; WORKERS overrides it. Each worker is a
# gthread worker (HTTP/1.1 keep-alive) with THREADS threads (default 4).
# TLS_CERT and TLS_KEY (PEM files, both or neither): serve HTTPS, gunicorn's
# --certfile/--keyfile (Python's ssl module on the system's OpenSSL).
import os
import sys

bind = f"127.0.0.1:{os.environ['PORT']}"
workers = int(os.environ.get("WORKERS") or 2 * len(os.sched_getaffinity(0)) + 1)
threads = int(os.environ.get("THREADS") or 4)
worker_class = "gthread"
keepalive = 5
graceful_timeout = 3   # SIGTERM: finish in-flight requests for at most 3 s
loglevel = "warning"   # no access log, no per-request output
accesslog = None

_cert, _key = os.environ.get("TLS_CERT"), os.environ.get("TLS_KEY")
if bool(_cert) != bool(_key):
    sys.exit("gunicorn.conf.py: set both TLS_CERT and TLS_KEY (PEM files) to serve HTTPS, or neither")
if _cert:
    certfile, keyfile = _cert, _key

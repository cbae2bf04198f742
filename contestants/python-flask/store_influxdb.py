"""Event-log on InfluxDB 1.x with the `influxdb` client: see stores.py."""

import itertools
import os
import threading
import urllib.parse

from influxdb import InfluxDBClient

from stores import Unavailable, Unstorable

# The last millisecond InfluxDB can store: its nanoseconds are an int64 (they
# end in 2262-04-11), and a write adds up to 999,999 ns to the millisecond.
INFLUX_MAX_TIMESTAMP_MS = (2 ** 63 - 2) // 1_000_000 - 1


class InfluxStore:
    def __init__(self):
        url = urllib.parse.urlsplit(os.environ.get("INFLUXDB_URL", "http://127.0.0.1:8086"))
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 8086
        self.db = os.environ.get("INFLUXDB_DB", "stackbench_py_flask")
        self.label = f"InfluxDB at {self.host}:{self.port}/{self.db}"
        self.local = threading.local()
        self.created = False
        # InfluxDB keeps one point per (measurement, tag set, timestamp): two
        # events with the same type, source and millisecond would overwrite
        # each other. Each write gets its own nanosecond offset within its
        # millisecond: the worker's pid (mod 1000) in the upper three digits,
        # a per-process counter (mod 1000) in the lower three, so offsets are
        # distinct across threads and across gunicorn's worker processes.
        # The pid is read at each write, so that a store made before a fork
        # (gunicorn --preload) still gives each worker its own offsets.
        self.sequence = itertools.count()

    def _client(self):
        client = getattr(self.local, "client", None)
        if client is None:
            # retries=1: one attempt (a failure is a 503, not a hidden wait).
            client = InfluxDBClient(host=self.host, port=self.port, database=self.db, timeout=5, retries=1)
            self.local.client = client
        if not self.created:
            client.create_database(self.db)  # idempotent in InfluxDB 1.x
            self.created = True
        return client

    def _fail(self, e):
        return Unavailable(f"{self.label} failed ({type(e).__name__}: {str(e).strip()[:300]}); retry later")

    def _count(self, client):
        result = client.query("SELECT COUNT(value) FROM events")
        points = list(result.get_points())  # no series while the measurement is empty
        return points[0]["count"] if points else 0

    def append(self, kind, source, value, ts):
        if ts > INFLUX_MAX_TIMESTAMP_MS:
            raise Unstorable("InfluxDB cannot store times after 2262-04-11: field `timestamp` must be at most "
                             f"{INFLUX_MAX_TIMESTAMP_MS} with this store, got {ts}")
        ns = ts * 1_000_000 + (os.getpid() % 1000) * 1000 + next(self.sequence) % 1000
        point = {"measurement": "events", "tags": {"type": kind, "source": source},
                 "fields": {"value": value}, "time": ns}
        try:
            client = self._client()
            client.write_points([point], time_precision="n")
            return self._count(client)
        except Exception as e:  # requests' connection errors, InfluxDBClientError, InfluxDBServerError
            raise self._fail(e) from None

    def count(self):
        try:
            return self._count(self._client())
        except Exception as e:
            raise self._fail(e) from None

    def reset(self):
        try:
            client = self._client()
            client.query("DROP MEASUREMENT events", method="POST")
        except Exception as e:
            if "measurement not found" not in str(e):
                raise self._fail(e) from None

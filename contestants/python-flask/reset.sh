#!/bin/sh
# Empties the event-log store that STORE (and its settings, as for run.sh)
# names: deletes the SQLite file, drops the InfluxDB measurement `events`, or
# drops the PostgreSQL table (the server recreates it). The plan's `reset`.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
exec "$here/.venv/bin/python" -c 'import stores; stores.open_store().reset()'

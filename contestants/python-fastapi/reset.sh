#!/bin/sh
# Empties the event-log store that STORE (and its settings, as for run.sh)
# names: drops the InfluxDB measurement `events`, drops the PostgreSQL table
# (the server recreates it), or deletes the SQLite file. The plan's `reset`.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
exec "$here/.venv/bin/python" -c 'import asyncio, stores; asyncio.run(stores.reset())'

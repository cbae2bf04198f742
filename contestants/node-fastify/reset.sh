#!/bin/sh
# Empties the event-log store named by STORE (the same variable run.sh reads):
# SQLite: DELETE FROM events; PostgreSQL: TRUNCATE the table; InfluxDB:
# DROP MEASUREMENT events. Creates the table/database first when missing.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
exec node "$here/src/reset.js"

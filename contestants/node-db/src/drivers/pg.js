'use strict';
// node-postgres: a Pool, one named prepared statement (parsed once per
// connection; each request is one Bind/Execute round trip).

const { Pool } = require('pg');
const { TIMEOUTS } = require('./timeouts');

function pgDriver(url, poolSize) {
  const pool = new Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: TIMEOUTS.connect,
    query_timeout: TIMEOUTS.query,
    application_name: 'stackbench-node-db',
  });
  // A pooled connection that breaks while idle emits here; the pool drops it.
  pool.on('error', () => {});
  const statement = {
    name: 'items_by_id',
    text: 'SELECT id, name, price FROM items WHERE id IN ($1, $2) ORDER BY id',
  };
  return {
    name: 'pg',
    database: 'PostgreSQL',
    layer: 'node-postgres (pg) Pool, named prepared statement',
    pool: `${poolSize} connections`,
    async read(lo, hi) {
      const { rows } = await pool.query({ ...statement, values: [lo, hi] });
      return rows;
    },
    close: () => pool.end(),
  };
}

module.exports = { pgDriver };

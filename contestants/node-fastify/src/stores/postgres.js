'use strict';
// PostgreSQL through node-postgres (`pg`) with a Pool. One statement and one
// round trip per event, a named prepared statement (prepared once per
// connection):
//   WITH ins AS (INSERT ...) SELECT COUNT(*) + 1 FROM t
// The sub-statements of a WITH share the snapshot taken before the statement,
// so COUNT(*) does not see the row being inserted: `+ 1` adds it. Durability
// is PostgreSQL's: with synchronous_commit=on (the default) the statement
// returns once its WAL is fsynced. A broken connection is discarded by the
// pool, so the next request reconnects (503 until the server is back).

const { Pool } = require('pg');
const { StoreUnavailable } = require('./errors');

// The same advisory lock key for every process creating the table: IF NOT
// EXISTS alone lets two concurrent creators collide.
const DDL_LOCK = 7_202_611;

function postgresStore(url, table, poolSize) {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table)) {
    throw new Error(`table=${table} is not a plain SQL identifier`);
  }
  const safeUrl = url.replace(/:\/\/([^:@/]+):[^@/]*@/, '://$1:***@');
  const label = `PostgreSQL at ${safeUrl}, table ${table}`;
  const ddl = `BEGIN;
    SELECT pg_advisory_xact_lock(${DDL_LOCK});
    CREATE TABLE IF NOT EXISTS ${table} (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      kind TEXT NOT NULL, source TEXT NOT NULL,
      value DOUBLE PRECISION NOT NULL, ts_ms BIGINT NOT NULL);
    COMMIT;`;
  const appendSql = `WITH ins AS (INSERT INTO ${table} (kind, source, value, ts_ms) VALUES ($1, $2, $3, $4)) `
    + `SELECT COUNT(*) + 1 AS n FROM ${table}`;
  const countSql = `SELECT COUNT(*) AS n FROM ${table}`;
  let pool;
  const newPool = (max) => {
    const p = new Pool({ connectionString: url, max, connectionTimeoutMillis: 2000, application_name: 'stackbench-node-fastify' });
    // An idle connection that breaks emits here; without a listener it would kill the process.
    p.on('error', () => {});
    return p;
  };
  const oneShot = async (sql) => {
    const p = newPool(1);
    try {
      await p.query(sql);
    } finally {
      await p.end();
    }
  };
  const query = async (q) => {
    try {
      const { rows } = await pool.query(q);
      return Number(rows[0].n);
    } catch (e) {
      throw new StoreUnavailable(label, e);
    }
  };
  return {
    label,
    describe: `${label}, pool of ${poolSize} per process (acknowledged once PostgreSQL has fsynced its WAL)`,
    prepare: () => oneShot(ddl),
    open() {
      pool = newPool(poolSize);
    },
    append: (e) => query({ name: 'append', text: appendSql, values: [e.type, e.source, e.value, e.timestamp] }),
    count: () => query({ name: 'count', text: countSql }),
    reset: async () => {
      await oneShot(ddl);
      await oneShot(`TRUNCATE ${table}`);
    },
    async close() {
      if (pool) await pool.end();
    },
  };
}

module.exports = { postgresStore };

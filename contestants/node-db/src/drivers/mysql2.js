'use strict';
// mysql2: its pool, `execute` (a server-side prepared statement, prepared once
// per connection and cached by mysql2; then one round trip per request).

const mysql = require('mysql2/promise');
const { TIMEOUTS } = require('./timeouts');

function mysql2Driver(url, poolSize) {
  const pool = mysql.createPool({
    uri: url,
    connectionLimit: poolSize,
    maxIdle: poolSize,
    connectTimeout: TIMEOUTS.connect,
    enableKeepAlive: true,
  });
  // A broken pooled connection emits here; the pool drops it.
  pool.on('connection', (conn) => conn.on('error', () => {}));
  const sql = 'SELECT id, name, price FROM items WHERE id IN (?, ?) ORDER BY id';
  return {
    name: 'mysql2',
    database: 'MySQL/MariaDB',
    layer: 'mysql2 pool, execute (prepared statement, cached per connection)',
    pool: `${poolSize} connections`,
    async read(lo, hi) {
      const [rows] = await pool.execute({ sql, timeout: TIMEOUTS.query }, [lo, hi]);
      return rows;
    },
    close: () => pool.end(),
  };
}

module.exports = { mysql2Driver };

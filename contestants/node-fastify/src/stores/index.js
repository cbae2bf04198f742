'use strict';
// STORE, a URL in the Rust reference's syntax, picks the event-log store:
//   sqlite:PATH                                   (default sqlite:events.db)
//   postgres://USER@HOST:5432/DB?table=NAME&pool=N (table default node_fastify_events)
//   influxdb://HOST:8086/DB?pool=N                 (database default stackbench_node_fastify)
// Connections: the Rust reference's rule, max(8, 4 x cores) for the whole
// server, split evenly over its worker processes (at least one each).

const { sqliteStore } = require('./sqlite');
const { postgresStore } = require('./postgres');
const { influxStore } = require('./influxdb');

function openStore(spec, { cores, workers, worker }) {
  const s = (spec || 'sqlite:events.db').trim();
  const scheme = s.slice(0, s.indexOf(':')).toLowerCase();
  if (scheme === 'sqlite') {
    const path = s.slice('sqlite:'.length).replace(/^\/\//, '') || 'events.db';
    return sqliteStore(path);
  }
  let url;
  try {
    url = new URL(s);
  } catch {
    throw new Error(`STORE=${s} is not a URL; write sqlite:PATH, postgres://USER@HOST:5432/DB or influxdb://HOST:8086/DB`);
  }
  const take = (key) => {
    const v = url.searchParams.get(key);
    url.searchParams.delete(key);
    return v;
  };
  const poolParam = take('pool');
  const total = poolParam ? Number(poolParam) : Math.max(8, 4 * cores);
  if (!Number.isInteger(total) || total < 1) throw new Error(`pool=${poolParam} is not a number of connections`);
  const perWorker = Math.max(1, Math.ceil(total / workers));
  if (scheme === 'postgres' || scheme === 'postgresql') {
    const table = take('table') || 'node_fastify_events';
    return postgresStore(url.toString(), table, perWorker);
  }
  if (scheme === 'influxdb') {
    const db = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'stackbench_node_fastify';
    return influxStore(`http://${url.host}`, db, perWorker, worker, workers);
  }
  throw new Error(`STORE=${s}: unknown store ${scheme}; write sqlite:PATH, postgres://USER@HOST:5432/DB or influxdb://HOST:8086/DB`);
}

module.exports = { openStore };

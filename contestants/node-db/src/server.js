'use strict';
// node server.js: the db-read scenario (docs/scenarios.md), one server for
// every driver whose database is given (POSTGRES_URL, MYSQL_URL, REDIS_URL),
// as the Rust reference sb-db-read does.
//
// Production layout: one process per core this server may use (node:cluster;
// cores.js reads the affinity mask and the cgroup CPU quota), a single
// process without a cluster primary when that is 1; WORKERS=N overrides.
// Environment: PORT (required), BIND (default 127.0.0.1), TLS_CERT and TLS_KEY
// (PEM files, both or neither: serve HTTPS, Fastify's `https` option, Node's TLS
// on its OpenSSL). SIGTERM (or SIGINT): stop accepting, finish the requests in
// flight, close the pools.

const cluster = require('node:cluster');
const fs = require('node:fs');
const { cores } = require('./cores');
const { buildApp } = require('./app');
const { openDrivers } = require('./drivers');

const STOP_DEADLINE_MS = 4000;

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`server.js: set PORT to a TCP port, got ${JSON.stringify(process.env.PORT)}`);
  process.exit(2);
}
if (!process.env.POSTGRES_URL && !process.env.MYSQL_URL && !process.env.REDIS_URL) {
  console.error('server.js: give at least one database: POSTGRES_URL, MYSQL_URL, REDIS_URL');
  process.exit(2);
}
const host = process.env.BIND || '127.0.0.1';
const https = tlsFiles(process.env.TLS_CERT, process.env.TLS_KEY);
const coreCount = cores();
const workers = Number(process.env.WORKERS) || coreCount;

// { cert, key } read from the two PEM files, or null without them.
function tlsFiles(certFile, keyFile) {
  if (!certFile && !keyFile) return null;
  if (!certFile || !keyFile) {
    console.error('server.js: set both TLS_CERT and TLS_KEY (PEM files) to serve HTTPS, or neither');
    process.exit(2);
  }
  try {
    return { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) };
  } catch (e) {
    console.error(`server.js: cannot read TLS_CERT or TLS_KEY: ${e.message}`);
    process.exit(2);
  }
}

async function serve(announce) {
  const { drivers, off, sizes } = openDrivers(process.env, { cores: coreCount, workers });
  const app = buildApp({ drivers, off, workers, https });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), STOP_DEADLINE_MS).unref();
    try {
      await app.close();
      await Promise.allSettled([...drivers.values()].map((d) => d.close()));
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // Redis connects at once; wait (at most 2 s) so the first answers are not 503.
  await Promise.all([...drivers.values()].map((d) => (d.ready ? d.ready() : null)));
  await app.listen({ port, host });
  if (announce) {
    console.log(`node-db: db-read on ${https ? 'https' : 'http'}://${host}:${port}, ${workers} process(es) for ${coreCount} core(s); pools: ${sizes.rule}`);
    for (const d of drivers.values()) console.log(`  /db/${d.name.padEnd(16)} ${d.database}; ${d.layer}; ${d.pool} per process`);
  }
}

function fail(e) {
  console.error(`node-db: ${e.message}`);
  process.exit(1);
}

function primary() {
  if (workers === 1) {
    serve(true).catch(fail);
    return;
  }
  let stopping = false;
  let announced = false;
  const live = new Set();
  const stopAll = () => {
    for (const w of live) w.process.kill('SIGTERM');
    setTimeout(() => process.exit(), STOP_DEADLINE_MS + 500).unref();
  };
  const fork = (index) => {
    const w = cluster.fork({ WORKER_INDEX: String(index), ANNOUNCE: !announced && index === 0 ? '1' : '' });
    live.add(w);
    w.on('listening', () => {
      w.listened = true;
      announced = true;
    });
    w.on('exit', (code, signal) => {
      live.delete(w);
      if (stopping) {
        if (live.size === 0) process.exit();
        return;
      }
      if (!w.listened) {
        console.error(`node-db: worker ${index} exited before listening (${signal || `exit ${code}`})`);
        stopping = true;
        process.exitCode = 1;
        if (live.size === 0) process.exit();
        stopAll();
        return;
      }
      fork(index); // a crashed worker is replaced
    });
  };
  for (let i = 0; i < workers; i += 1) fork(i);
  const stop = () => {
    if (stopping) return;
    stopping = true;
    stopAll();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (cluster.isPrimary) {
  primary();
} else {
  serve(process.env.ANNOUNCE === '1').catch(fail);
}

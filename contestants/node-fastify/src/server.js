'use strict';
// node server.js dummy|event-log
//
// Production layout: one Node.js process per core this server may use
// (node:cluster; the core count is read from the affinity mask and the cgroup
// CPU quota, see cores.js), or a single process, without a cluster primary,
// when that count is 1. WORKERS=N overrides the count.
//
// Environment: PORT (required), BIND (default 127.0.0.1), STORE (event-log:
// see stores/index.js), TLS_CERT and TLS_KEY (PEM files, both or neither: serve
// HTTPS, Fastify's `https` option, Node's TLS on its OpenSSL). SIGTERM (or SIGINT) stops gracefully: each worker
// stops accepting, finishes the requests in flight, closes idle keep-alive
// connections and its store, then exits; the primary exits when they have.

const cluster = require('node:cluster');
const fs = require('node:fs');
const { cores } = require('./cores');
const { buildApp } = require('./app');
const { openStore } = require('./stores');

const STOP_DEADLINE_MS = 4000;

const scenario = process.argv[2] || process.env.SCENARIO || 'dummy';
if (scenario !== 'dummy' && scenario !== 'event-log') {
  console.error(`server.js: the scenario must be dummy or event-log, got ${scenario}`);
  process.exit(2);
}
const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`server.js: set PORT to a TCP port, got ${JSON.stringify(process.env.PORT)}`);
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

function storeFor(worker) {
  return scenario === 'event-log'
    ? openStore(process.env.STORE, { cores: coreCount, workers, worker })
    : null;
}

async function serve(worker) {
  const store = storeFor(worker);
  if (store) store.open();
  const app = buildApp({ scenario, store, https });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), STOP_DEADLINE_MS).unref();
    try {
      await app.close();
      if (store) await store.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  await app.listen({ port, host });
  return store;
}

function fail(e) {
  console.error(`node-fastify: ${e.message}`);
  process.exit(1);
}

async function primary() {
  // Store setup (database, table, journal mode) once, before any worker.
  const store = storeFor(0);
  if (store) await store.prepare();
  const what = `${scenario} on ${https ? 'https' : 'http'}://${host}:${port}, ${workers} process(es) for ${coreCount} core(s)`
    + `${store ? `, ${store.describe}` : ''}`;
  if (workers === 1) {
    await serve(0);
    console.log(`node-fastify: ${what}`);
    return;
  }
  let stopping = false;
  let listening = 0;
  const live = new Set();
  const stopAll = () => {
    for (const w of live) w.process.kill('SIGTERM');
    setTimeout(() => process.exit(), STOP_DEADLINE_MS + 500).unref();
  };
  const fork = (index) => {
    const w = cluster.fork({ WORKER_INDEX: String(index) });
    live.add(w);
    w.on('listening', () => {
      w.listened = true;
      listening += 1;
      if (listening === workers) console.log(`node-fastify: ${what}`);
    });
    w.on('exit', (code, signal) => {
      live.delete(w);
      if (stopping) {
        if (live.size === 0) process.exit();
        return;
      }
      if (!w.listened) {
        // It never started (port taken, store gone...): give up rather than loop.
        console.error(`node-fastify: worker ${index} exited before listening (${signal || `exit ${code}`})`);
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
    // The workers get the signal too when it went to the process group; it is
    // sent anyway for a signal sent to this process alone (a second one is ignored).
    stopAll();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (cluster.isPrimary) {
  primary().catch(fail);
} else {
  serve(Number(process.env.WORKER_INDEX)).catch(fail);
}

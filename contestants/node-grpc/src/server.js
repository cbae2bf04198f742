'use strict';
// node server.js: the bubble-sort scenario (docs/scenarios.md) on
// @grpc/grpc-js, `sort.v1.SortService/BubbleSort` over h2c on
// 127.0.0.1:$PORT, the service loaded at start from the repository's proto
// (proto/sort/v1/sort.proto) with @grpc/proto-loader.
//
// Production layout: one process per core this server may use (node:cluster;
// cores.js reads the affinity mask and the cgroup CPU quota), a single
// process without a cluster primary when that is 1. A sort is CPU work on
// the process's one JavaScript thread, so processes are what use more cores.
// WORKERS=N overrides. TLS_CERT and TLS_KEY (PEM files, both or neither): gRPC
// over TLS (ServerCredentials.createSsl, Node's TLS on its OpenSSL, ALPN h2)
// instead of h2c. SIGTERM (or SIGINT): tryShutdown (no new calls, the calls in
// flight finish), forceShutdown after a deadline.

const fs = require('node:fs');
const path = require('node:path');
const cluster = require('node:cluster');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { cores } = require('./cores');
const { bubbleSort, MAX_LEN } = require('./sort');

// The repository's proto, relative to this contestant's directory.
const CONTESTANT_DIR = path.join(__dirname, '..');
const PROTO = path.resolve(CONTESTANT_DIR, '../../proto/sort/v1/sort.proto');
const STOP_DEADLINE_MS = 4000;

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`server.js: set PORT to a TCP port, got ${JSON.stringify(process.env.PORT)}`);
  process.exit(2);
}
const host = process.env.BIND || '127.0.0.1';
const tls = tlsFiles(process.env.TLS_CERT, process.env.TLS_KEY);
const coreCount = cores();
const workers = Number(process.env.WORKERS) || coreCount;

// { cert, key } read from the two PEM files, or null without them.
function tlsFiles(certFile, keyFile) {
  if (!certFile && !keyFile) return null;
  if (!certFile || !keyFile) {
    console.error('server.js: set both TLS_CERT and TLS_KEY (PEM files) to serve gRPC over TLS, or neither');
    process.exit(2);
  }
  try {
    return { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) };
  } catch (e) {
    console.error(`server.js: cannot read TLS_CERT or TLS_KEY: ${e.message}`);
    process.exit(2);
  }
}

// Insecure (h2c), or TLS with the certificate chain and key, no client certificate asked.
function credentials() {
  return tls
    ? grpc.ServerCredentials.createSsl(null, [{ private_key: tls.key, cert_chain: tls.cert }], false)
    : grpc.ServerCredentials.createInsecure();
}

function bubbleSortCall(call, callback) {
  const { data } = call.request;
  if (data.length > MAX_LEN) {
    callback({
      code: grpc.status.INVALID_ARGUMENT,
      details: `the list has ${data.length} numbers; bubble sort accepts at most ${MAX_LEN} `
        + '(it is O(n²): a much longer list would hold a core for minutes); send a shorter list',
    });
    return;
  }
  callback(null, { data: bubbleSort(data) });
}

function serve() {
  const definition = protoLoader.loadSync(PROTO, { keepCase: true, defaults: true, arrays: true });
  const { SortService } = grpc.loadPackageDefinition(definition).sort.v1;
  const server = new grpc.Server();
  server.addService(SortService.service, { BubbleSort: bubbleSortCall });
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, credentials(), (err) => {
      if (err) {
        reject(err);
        return;
      }
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        setTimeout(() => {
          server.forceShutdown();
          process.exit(0);
        }, STOP_DEADLINE_MS).unref();
        server.tryShutdown(() => process.exit(0));
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      resolve(server);
    });
  });
}

function fail(e) {
  console.error(`node-grpc: ${e.message}`);
  process.exit(1);
}

const what = () => `sort.v1.SortService on ${tls ? 'TLS' : 'h2c'} ${host}:${port}, ${workers} process(es) for ${coreCount} core(s)`;

function primary() {
  if (workers === 1) {
    serve().then(() => console.log(`node-grpc: ${what()}`), fail);
    return;
  }
  let stopping = false;
  let ready = 0;
  const live = new Set();
  const stopAll = () => {
    for (const w of live) w.process.kill('SIGTERM');
    setTimeout(() => process.exit(), STOP_DEADLINE_MS + 500).unref();
  };
  const fork = () => {
    const w = cluster.fork();
    live.add(w);
    w.on('listening', () => {
      w.listened = true;
      ready += 1;
      if (ready === workers) console.log(`node-grpc: ${what()}`);
    });
    w.on('exit', (code, signal) => {
      live.delete(w);
      if (stopping) {
        if (live.size === 0) process.exit();
        return;
      }
      if (!w.listened) {
        console.error(`node-grpc: a worker exited before listening (${signal || `exit ${code}`})`);
        stopping = true;
        process.exitCode = 1;
        if (live.size === 0) process.exit();
        stopAll();
        return;
      }
      fork(); // a crashed worker is replaced
    });
  };
  for (let i = 0; i < workers; i += 1) fork();
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
  serve().catch(fail);
}

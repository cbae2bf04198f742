'use strict';
// InfluxDB 1.x, the original experiment's store, over its HTTP API with
// undici's keep-alive Pool: each event is one line of line protocol
//   events,type=T,source=S value=V <ns>
// POSTed to /write (precision=ns), then the count is the InfluxQL
//   SELECT COUNT(value) FROM "events"
// the original experiment's algorithm, so the count is the store's whatever
// the number of processes. InfluxDB answers a write once it is in its WAL
// (fsynced before the answer with the default wal-fsync-delay of 0s).
//
// InfluxDB keeps one point per (measurement, tag set, timestamp): two events
// with the same type, source and millisecond would overwrite each other. So
// each write gets a distinct nanosecond offset within its millisecond: worker
// w of W takes offsets w*span + (seq % span), span = floor(1e6 / W), seq
// counting from a random start, so no two processes share an offset and one
// process repeats one only after `span` writes. The stored millisecond is the
// event's. Nanoseconds exceed 2^53, so they are computed with BigInt.
// InfluxDB's nanoseconds are an int64: times after 2262-04-11 are refused
// with a 400 (nothing is written).

const { Pool } = require('undici');
const { StoreUnavailable, Unstorable } = require('./errors');

// The last millisecond InfluxDB can store: (2^63 - 2) / 1e6 - 1, as the Rust reference.
const MAX_TIMESTAMP_MS = 9_223_372_036_853;
const MEASUREMENT = 'events';
const TIMEOUT_MS = 5000;

function influxStore(origin, db, connections, worker, workers) {
  const label = `InfluxDB at ${origin}/${db}`;
  const enc = encodeURIComponent;
  const writePath = `/write?db=${enc(db)}&precision=ns`;
  const countPath = `/query?db=${enc(db)}&q=${enc(`SELECT COUNT(value) FROM "${MEASUREMENT}"`)}`;
  const span = Math.floor(1_000_000 / workers);
  const base = BigInt(worker * span);
  let seq = Math.floor(Math.random() * span);
  let pool;

  const newPool = (n) => new Pool(origin, {
    connections: n,
    connectTimeout: 2000,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });

  async function exchange(p, method, path, body) {
    let res;
    let text;
    try {
      res = await p.request({ method, path, body, headers: { 'content-type': 'text/plain; charset=utf-8' } });
      text = await res.body.text();
    } catch (e) {
      throw new StoreUnavailable(label, e);
    }
    return { status: res.statusCode, text };
  }

  async function influxql(p, method, path) {
    const { status, text } = await exchange(p, method, path);
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      throw new StoreUnavailable(label, `HTTP ${status} with a body that is not JSON: ${text.slice(0, 200)}`);
    }
    const error = json.error ?? json.results?.[0]?.error;
    if (error) throw new StoreUnavailable(label, error);
    if (status !== 200) throw new StoreUnavailable(label, `HTTP ${status}`);
    return json;
  }

  async function countOn(p) {
    const json = await influxql(p, 'GET', countPath);
    // No "series" when the measurement is empty.
    return json.results?.[0]?.series?.[0]?.values?.[0]?.[1] ?? 0;
  }

  async function oneShot(statements) {
    const p = newPool(1);
    try {
      for (const q of statements) await influxql(p, 'POST', `/query?db=${enc(db)}&q=${enc(q)}`);
    } finally {
      await p.close();
    }
  }

  return {
    label,
    describe: `${label}, measurement ${MEASUREMENT}, ${connections} connection(s) per process`,
    prepare: () => oneShot([`CREATE DATABASE "${db}"`]),
    open() {
      pool = newPool(connections);
    },
    async append(e) {
      if (e.timestamp > MAX_TIMESTAMP_MS) {
        throw new Unstorable('InfluxDB cannot store times after 2262-04-11: field `timestamp` must be at most '
          + `${MAX_TIMESTAMP_MS} with this store, got ${e.timestamp}`);
      }
      const offset = base + BigInt(seq % span);
      seq += 1;
      const ns = BigInt(e.timestamp) * 1_000_000n + offset;
      // type and source are [A-Za-z0-9_.:-]: nothing to escape in line protocol.
      const line = `${MEASUREMENT},type=${e.type},source=${e.source} value=${e.value} ${ns}`;
      const { status, text } = await exchange(pool, 'POST', writePath, line);
      if (status !== 204) throw new StoreUnavailable(label, `the write got HTTP ${status}: ${text.trim()}`);
      return countOn(pool);
    },
    count: () => countOn(pool),
    reset: () => oneShot([`CREATE DATABASE "${db}"`, `DROP MEASUREMENT "${MEASUREMENT}"`]),
    async close() {
      if (pool) await pool.close();
    },
  };
}

module.exports = { influxStore, MAX_TIMESTAMP_MS };

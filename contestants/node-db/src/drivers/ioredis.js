'use strict';
// ioredis: one pipeline of two HGETALL item:<id>, one round trip. One
// connection per core this process may use, taken in turn.

const Redis = require('ioredis');
const { TIMEOUTS } = require('./timeouts');

function ioredisDriver(url, connections) {
  const clients = [];
  for (let i = 0; i < connections; i += 1) {
    const client = new Redis(url, {
      connectTimeout: TIMEOUTS.connect,
      commandTimeout: TIMEOUTS.query,
      // Down means 503 now, not a queue that waits for the reconnect (which
      // ioredis keeps trying, so the driver recovers by itself).
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => Math.min(times * 50, 1000),
    });
    client.on('error', () => {});
    clients.push(client);
  }
  let next = 0;
  return {
    name: 'ioredis',
    database: 'Redis',
    layer: 'ioredis, one pipeline of two HGETALL',
    pool: `${connections} connection${connections === 1 ? '' : 's'}`,
    ready: () => Promise.all(clients.map((c) => (c.status === 'ready'
      ? null
      : new Promise((resolve) => { c.once('ready', resolve); setTimeout(resolve, 2000).unref(); })))),
    async read(lo, hi) {
      const client = clients[next];
      next = (next + 1) % clients.length;
      const replies = await client.pipeline().hgetall(`item:${lo}`).hgetall(`item:${hi}`).exec();
      const rows = [];
      for (let k = 0; k < 2; k += 1) {
        const [err, hash] = replies[k];
        if (err) throw err;
        if (hash.name !== undefined) {
          rows.push({ id: k === 0 ? lo : hi, name: hash.name, price: Number(hash.price) });
        }
      }
      return rows;
    },
    close: async () => {
      await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}

module.exports = { ioredisDriver };

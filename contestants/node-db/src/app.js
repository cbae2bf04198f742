'use strict';
// The Fastify app of `db-read`: GET /db lists the drivers, GET
// /db/{driver}?a=<id>&b=<id> answers rows a and b ordered by id.

const Fastify = require('fastify');
const { parseIds } = require('./ids');
const { TIMEOUTS, withDeadline } = require('./drivers/timeouts');

const ROUTES = 'GET /db, GET /db/{driver}?a=<id>&b=<id>';
const CONTRACT_ROWS = 'the data set has ids 1..=10000';

const rowsReply = {
  200: {
    type: 'array',
    items: {
      type: 'object',
      required: ['id', 'name', 'price'],
      properties: { id: { type: 'integer' }, name: { type: 'string' }, price: { type: 'integer' } },
    },
  },
};

class HttpError extends Error {
  constructor(statusCode, message) {
    super(message);
    this.statusCode = statusCode;
  }
}

function pathOf(url) {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

// https: { key, cert } (PEM) to serve HTTPS through node:https (Fastify's `https`
// option), or null for HTTP.
function buildApp({ drivers, off, workers, https = null }) {
  const app = Fastify({ logger: false, return503OnClosing: true, ...(https ? { https } : {}) });
  const listing = {
    drivers: [...drivers.values()].map(({ name, database, layer, pool }) => ({
      name, database, layer, pool: workers > 1 ? `${pool} in each of ${workers} processes` : pool,
    })),
  };
  const served = [...drivers.keys()].join(', ');
  const offNote = off.length === 0 ? ''
    : ` (${off.map(([name]) => name).join(', ')} ${off.length === 1 ? 'is' : 'are'} off here: `
      + `set ${[...new Set(off.map(([, env]) => env))].join(' / ')})`;

  app.setErrorHandler((err, request, reply) => {
    const status = err.statusCode ?? 500;
    const message = status >= 500 && status !== 503 ? `internal error (${err.message}); retry later` : err.message;
    reply.code(status).type('application/json; charset=utf-8').send({ error: message });
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `no route for ${request.method} ${pathOf(request.url)}; this server answers ${ROUTES}` });
  });

  for (const url of ['/db', '/db/:driver']) {
    app.route({
      method: ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'],
      url,
      onRequest: async (request, reply) => {
        reply.code(405).header('allow', 'GET, HEAD')
          .send({ error: `${pathOf(request.url)} does not accept ${request.method}; allowed: GET, HEAD` });
        return reply;
      },
      handler: async () => undefined,
    });
  }

  app.get('/db', async () => listing);

  app.get('/db/:driver', { schema: { response: rowsReply } }, async (request) => {
    const driver = drivers.get(request.params.driver);
    if (driver === undefined) {
      throw new HttpError(404, `unknown driver ${JSON.stringify(request.params.driver)}; this server serves: ${served}${offNote}`);
    }
    const [lo, hi] = parseIds(request.query);
    let rows;
    try {
      rows = await withDeadline(driver.read(lo, hi), TIMEOUTS.request);
    } catch (e) {
      throw new HttpError(503, `${driver.name} cannot read from ${driver.database}: ${e.message || e}; retry when the database is back`);
    }
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of [lo, hi]) {
      if (!byId.has(id)) throw new HttpError(404, `no row with id ${id} in items (${CONTRACT_ROWS}); ask for an id that exists`);
    }
    return [byId.get(lo), byId.get(hi)];
  });

  return app;
}

module.exports = { buildApp };

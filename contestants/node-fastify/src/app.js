'use strict';
// The Fastify app of `dummy` and `event-log`: routes, the JSON body parser,
// the route schemas and the contract's error answers ({"error": "..."}).

const Fastify = require('fastify');
const { MAX_BODY, BadRequest, parseEventBody, eventSchema, schemaErrorFormatter } = require('./event');

const ROUTES = 'POST /events, GET /events/count';
const countReply = {
  200: { type: 'object', required: ['count'], properties: { count: { type: 'integer' } } },
};

function contentTypeMessage(got) {
  return got === undefined
    ? 'the request has no Content-Type; send Content-Type: application/json'
    : `Content-Type must be application/json, got ${JSON.stringify(got)}`;
}

const tooLargeMessage = `the request body is larger than ${MAX_BODY} bytes (64 KiB); send a smaller body`;

function pathOf(url) {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

// scenario: 'dummy' | 'event-log'; store: an opened store (event-log only);
// https: { key, cert } (PEM) to serve HTTPS through node:https, or null.
function buildApp({ scenario, store, https = null }) {
  const app = Fastify({
    ...(https ? { https } : {}),
    logger: false,
    bodyLimit: MAX_BODY,
    return503OnClosing: true,
    ajv: {
      customOptions: {
        coerceTypes: false, // "1" is not an integer
        useDefaults: false,
        removeAdditional: false,
        allErrors: false,
        verbose: true, // the refused value is in the error, for the message
      },
    },
    schemaErrorFormatter,
  });

  // Only JSON bodies: anything else reaches the error handler as 415, answered 400.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseEventBody);

  app.setErrorHandler((err, request, reply) => {
    let status = err.statusCode ?? 500;
    let message = err.message;
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      status = 400;
      message = contentTypeMessage(request.headers['content-type']);
    } else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      status = 413;
      message = tooLargeMessage;
    } else if (status >= 500 && status !== 503) {
      message = `internal error (${message}); retry later`;
    }
    reply.code(status).type('application/json; charset=utf-8').send({ error: message });
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `no route for ${request.method} ${pathOf(request.url)}; this server answers ${ROUTES}` });
  });

  // A known path with another method: 405 with Allow, answered before the body is read.
  const notAllowed = (url, methods, allow) => app.route({
    method: methods,
    url,
    onRequest: async (request, reply) => {
      reply.code(405).header('allow', allow)
        .send({ error: `${url} does not accept ${request.method}; allowed: ${allow}` });
      return reply;
    },
    handler: async () => undefined,
  });
  notAllowed('/events', ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], 'POST');
  notAllowed('/events/count', ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], 'GET, HEAD');

  app.post('/events', {
    schema: { body: eventSchema, response: countReply },
    // A POST without a body and without a Content-Type never reaches the parser.
    preValidation: async (request) => {
      if (request.body === undefined) throw new BadRequest(contentTypeMessage(request.headers['content-type']));
    },
  }, scenario === 'dummy'
    ? async () => ({ count: 1 })
    : async (request) => {
      const e = request.body;
      const count = await store.append({
        type: e.type,
        source: e.source ?? 'unknown',
        value: e.value ?? 1.0,
        timestamp: e.timestamp ?? Date.now(),
      });
      return { count };
    });

  app.get('/events/count', { schema: { response: countReply } }, scenario === 'dummy'
    ? async () => ({ count: 1 })
    : async () => ({ count: await store.count() }));

  return app;
}

module.exports = { buildApp };

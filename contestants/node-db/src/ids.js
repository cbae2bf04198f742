'use strict';
// The ids of `GET /db/{driver}?a=<id>&b=<id>`: integers in 1..=2^31-1,
// defaults 1 and 2, each given at most once.

const MAX_ID = 2_147_483_647;

class BadRequest extends Error {
  constructor(message) {
    super(message);
    this.statusCode = 400;
  }
}

function parseId(query, key, fallback) {
  const raw = query[key];
  if (raw === undefined) return fallback;
  if (Array.isArray(raw)) throw new BadRequest(`query parameter \`${key}\` appears more than once; send it once`);
  const digits = /^[0-9]+$/.test(raw) ? raw.replace(/^0+(?=.)/, '') : '';
  const id = digits.length > 0 && digits.length <= 10 ? Number(digits) : 0;
  if (id < 1 || id > MAX_ID) {
    throw new BadRequest(`query parameter \`${key}\` must be an integer in 1..=${MAX_ID}, got ${JSON.stringify(raw)}`);
  }
  return id;
}

// [lo, hi]: the two ids in the order the answer lists them.
function parseIds(query) {
  const a = parseId(query, 'a', 1);
  const b = parseId(query, 'b', 2);
  return a <= b ? [a, b] : [b, a];
}

module.exports = { parseIds, BadRequest, MAX_ID };

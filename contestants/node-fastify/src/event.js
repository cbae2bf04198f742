'use strict';
// The event of `event-log` and `dummy` (docs/scenarios.md): the body parser
// and the JSON schema that validates it, with messages that name the field.
//
// Validation is split in two, because JSON.parse throws away what the
// contract needs to see:
//  - parseEventBody (the Content-Type parser): the body must be UTF-8 and one
//    JSON object (JSON.parse refuses malformed JSON and trailing bytes); then
//    one scan over its top level refuses a known key given twice (JSON.parse
//    keeps the last one silently), a `timestamp` written as a fraction or with
//    an exponent (JSON.parse turns 1e3 and 1.0 into integers) and a `value`
//    too large for a double (JSON.parse turns 1e400 into Infinity).
//  - eventSchema (Fastify's route schema, compiled by Ajv): the types, the
//    name rule of `type` and `source`, the range of `timestamp`. No type
//    coercion: a `timestamp` of "1" is a string, and a 400.
// Unknown keys are ignored; `null` for an optional field means its default.

const MAX_BODY = 64 * 1024;
const TIMESTAMP_LIMIT = 2 ** 53;
const NAME_RULE = 'a string of 1-64 characters from A-Z a-z 0-9 _ . : -';
const NAME_CHARSET = 'A-Z a-z 0-9 _ . : -';
const TIMESTAMP_RULE = 'an integer number of milliseconds since the Unix epoch, 0 <= t < 2^53';
const EXAMPLE = 'send an object like {"type": "page_view"}';

// Bits of the known keys, to find one given twice.
const KNOWN = { type: 1, source: 2, value: 4, timestamp: 8 };

class BadRequest extends Error {
  constructor(message) {
    super(message);
    this.statusCode = 400;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function kindOf(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string': return 'a string';
    case 'number': return 'a number';
    case 'boolean': return 'a boolean';
    default: return 'an object';
  }
}

// Index just past the JSON string that starts at `i` (text[i] === '"').
function stringEnd(text, i) {
  for (i += 1; ; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1; // "
    if (c === 0x5c) i += 1; // \ skips the escaped character
  }
}

// One pass over the top level of `text`, valid JSON whose value is an object
// (JSON.parse said so): a known key seen twice, and the literal text of
// `timestamp` and `value`.
function scanTopLevel(text) {
  let seen = 0;
  let rawTimestamp;
  let rawValue;
  let depth = 0;
  let expectKey = false;
  const n = text.length;
  for (let i = 0; i < n; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x22) { // "
      const end = stringEnd(text, i);
      if (depth === 1 && expectKey) {
        let key = text.slice(i + 1, end - 1);
        if (key.includes('\\')) key = JSON.parse(text.slice(i, end));
        const bit = KNOWN[key];
        if (bit !== undefined && Object.hasOwn(KNOWN, key)) {
          if (seen & bit) throw new BadRequest(`field \`${key}\` appears more than once; send it once`);
          seen |= bit;
          if (key === 'timestamp' || key === 'value') {
            let j = end;
            while (text.charCodeAt(j) !== 0x3a) j += 1; // :
            j += 1;
            while (/\s/.test(text[j])) j += 1;
            let k = j;
            while (k < n && !/[\s,}\]]/.test(text[k])) k += 1;
            if (key === 'timestamp') rawTimestamp = text.slice(j, k);
            else rawValue = text.slice(j, k);
          }
        }
        expectKey = false;
      }
      i = end - 1;
    } else if (c === 0x7b || c === 0x5b) { // { [
      depth += 1;
      if (depth === 1) expectKey = true;
    } else if (c === 0x7d || c === 0x5d) { // } ]
      depth -= 1;
    } else if (c === 0x2c && depth === 1) { // ,
      expectKey = true;
    }
  }
  return { rawTimestamp, rawValue };
}

const isNumberLiteral = (raw) => raw !== undefined && /^-?[0-9]/.test(raw);

// Fastify Content-Type parser for application/json (parseAs: 'buffer').
function parseEventBody(request, body, done) {
  let text;
  let event;
  try {
    text = utf8.decode(body);
  } catch {
    done(new BadRequest(`the body is not valid UTF-8; ${EXAMPLE}`));
    return;
  }
  try {
    event = JSON.parse(text);
  } catch (e) {
    done(new BadRequest(`the body is not valid JSON (${e.message}); ${EXAMPLE}`));
    return;
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    done(new BadRequest(`the body must be a JSON object like {"type": "page_view"}, not ${kindOf(event)}`));
    return;
  }
  try {
    const { rawTimestamp, rawValue } = scanTopLevel(text);
    if (isNumberLiteral(rawTimestamp) && /[.eE]/.test(rawTimestamp)) {
      throw new BadRequest(`field \`timestamp\` must be an integer number of milliseconds, got ${rawTimestamp}`);
    }
    if (isNumberLiteral(rawValue) && !Number.isFinite(event.value)) {
      throw new BadRequest(`field \`value\` must be a finite number, got ${rawValue}`);
    }
  } catch (e) {
    done(e);
    return;
  }
  done(null, event);
}

const name = { type: ['string', 'null'], minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]*$' };

const eventSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { ...name, type: 'string' },
    source: name,
    value: { type: ['number', 'null'] },
    timestamp: { type: ['integer', 'null'], minimum: 0, maximum: TIMESTAMP_LIMIT - 1 },
  },
};

// Ajv's first error (allErrors is off) as the contract's sentence. Ajv runs
// with `verbose`, so the error carries the value it refused.
function describeSchemaError(e) {
  const field = e.instancePath.slice(1);
  const data = e.data;
  if (e.keyword === 'required') return `field \`${e.params.missingProperty}\` is required: ${NAME_RULE}`;
  switch (field) {
    case 'type':
    case 'source':
      if (e.keyword === 'type') return `field \`${field}\` must be ${NAME_RULE}, not ${kindOf(data)}`;
      if (e.keyword === 'pattern') {
        const chars = [...data];
        const position = chars.findIndex((ch) => !/^[A-Za-z0-9_.:-]$/.test(ch));
        return `field \`${field}\` may only contain ${NAME_CHARSET}; found '${chars[position]}' at character ${position}`;
      }
      return `field \`${field}\` must be 1-64 characters long, got ${[...data].length}`;
    case 'value':
      return `field \`value\` must be a finite number, not ${kindOf(data)}`;
    case 'timestamp':
      if (e.keyword === 'type' && typeof data === 'number') {
        return `field \`timestamp\` must be an integer number of milliseconds, got ${data}`;
      }
      if (e.keyword === 'type') return `field \`timestamp\` must be ${TIMESTAMP_RULE}, not ${kindOf(data)}`;
      return `field \`timestamp\` must be in 0 <= t < 2^53 (9007199254740992), got ${data}`;
    default:
      return `the body must be a JSON object like {"type": "page_view"}, not ${kindOf(data)}`;
  }
}

function schemaErrorFormatter(errors) {
  return new BadRequest(describeSchemaError(errors[0]));
}

module.exports = {
  MAX_BODY,
  BadRequest,
  parseEventBody,
  eventSchema,
  schemaErrorFormatter,
  kindOf,
};

'use strict';

// The store could not take or count the event: a 503, and nothing is acknowledged.
class StoreUnavailable extends Error {
  constructor(label, cause) {
    super(`${label} is unavailable: ${cause && cause.message ? cause.message : cause}; retry later`);
    this.statusCode = 503;
  }
}

// A valid event this store cannot hold (nothing was written): a 400.
class Unstorable extends Error {
  constructor(message) {
    super(message);
    this.statusCode = 400;
  }
}

module.exports = { StoreUnavailable, Unstorable };

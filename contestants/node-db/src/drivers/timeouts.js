'use strict';
// A database that is down or hangs is a 503 within 2 seconds. Each read has
// a deadline of `request` (app.js), whatever the driver does; within it the
// drivers' own timeouts free their connections: connecting, or waiting for a
// pooled connection, gives up after `connect` (`acquire` for Sequelize's
// pool), a query after `query` (pg, mysql2 execute, ioredis).
const TIMEOUTS = { connect: 800, acquire: 800, query: 1000, request: 1500 };

// `promise`, or a rejection after `ms`.
function withDeadline(promise, ms) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

module.exports = { TIMEOUTS, withDeadline };

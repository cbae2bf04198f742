'use strict';
// The drivers this server serves: exactly those whose database is given.
//   POSTGRES_URL -> pg, sequelize-pg
//   MYSQL_URL    -> mysql2, sequelize-mysql
//   REDIS_URL    -> ioredis
// Pools, the Rust reference's rule: each SQL pool 16 connections per core
// this server may use, at most 30; Redis one connection per core. Both are
// totals for the server, split evenly over its worker processes.

const { pgDriver } = require('./pg');
const { mysql2Driver } = require('./mysql2');
const { ioredisDriver } = require('./ioredis');
const { sequelizeDriver } = require('./sequelize');

const ALL = [
  ['pg', 'POSTGRES_URL'],
  ['sequelize-pg', 'POSTGRES_URL'],
  ['mysql2', 'MYSQL_URL'],
  ['sequelize-mysql', 'MYSQL_URL'],
  ['ioredis', 'REDIS_URL'],
];

function poolSizes(cores, workers) {
  const sql = Math.min(16 * cores, 30);
  return {
    sql: Math.max(1, Math.ceil(sql / workers)),
    redis: Math.max(1, Math.ceil(cores / workers)),
    rule: `SQL pools 16 x ${cores} core(s), at most 30, = ${sql}; Redis ${cores} connection(s); `
      + `split over ${workers} process(es)`,
  };
}

function openDrivers(env, { cores, workers }) {
  const sizes = poolSizes(cores, workers);
  const drivers = new Map();
  const pg = env.POSTGRES_URL;
  const my = env.MYSQL_URL;
  const redis = env.REDIS_URL;
  if (pg) {
    drivers.set('pg', pgDriver(pg, sizes.sql));
    drivers.set('sequelize-pg', sequelizeDriver('sequelize-pg', 'postgres', pg, sizes.sql));
  }
  if (my) {
    drivers.set('mysql2', mysql2Driver(my, sizes.sql));
    drivers.set('sequelize-mysql', sequelizeDriver('sequelize-mysql', 'mysql', my, sizes.sql));
  }
  if (redis) drivers.set('ioredis', ioredisDriver(redis, sizes.redis));
  const off = ALL.filter(([name]) => !drivers.has(name));
  return { drivers, off, sizes };
}

module.exports = { openDrivers, ALL };

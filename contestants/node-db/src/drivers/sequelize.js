'use strict';
// Sequelize 6, the ORM Node.js teams write with (the original experiment's
// "Ecto" row): an `Item` model over table `items`, read with
//   Item.findAll({ where: { id: [a, b] }, order: ['id'] })
// which builds `SELECT ... WHERE id IN (a, b) ORDER BY id` with the values
// escaped into the text (Sequelize does not bind them), runs it on its pool
// (sequelize-pool over pg or mysql2), and builds one model instance per row.

const { Sequelize, DataTypes } = require('sequelize');
const { TIMEOUTS } = require('./timeouts');

function sequelizeDriver(name, dialect, url, poolSize) {
  const sequelize = new Sequelize(url, {
    dialect,
    logging: false,
    benchmark: false,
    pool: { max: poolSize, min: 0, acquire: TIMEOUTS.acquire, idle: 10_000, evict: 1000 },
    dialectOptions: dialect === 'postgres'
      ? { connectionTimeoutMillis: TIMEOUTS.connect, query_timeout: TIMEOUTS.query, application_name: 'stackbench-node-db' }
      : { connectTimeout: TIMEOUTS.connect },
    retry: { max: 0 },
  });
  const Item = sequelize.define('Item', {
    id: { type: DataTypes.INTEGER, primaryKey: true },
    name: { type: DataTypes.STRING(64), allowNull: false },
    price: { type: DataTypes.INTEGER, allowNull: false },
  }, { tableName: 'items', timestamps: false });
  return {
    name,
    database: dialect === 'postgres' ? 'PostgreSQL' : 'MySQL/MariaDB',
    layer: `Sequelize 6 model findAll over ${dialect === 'postgres' ? 'pg' : 'mysql2'}`,
    pool: `${poolSize} connections`,
    async read(lo, hi) {
      // (pg takes query_timeout from dialectOptions; mysql2 under Sequelize
      // has no query timeout: the app's deadline answers for it.)
      const items = await Item.findAll({ where: { id: [lo, hi] }, order: ['id'] });
      return items.map((item) => item.get({ plain: true }));
    },
    close: () => sequelize.close(),
  };
}

module.exports = { sequelizeDriver };

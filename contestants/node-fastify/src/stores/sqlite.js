'use strict';
// SQLite through better-sqlite3 (synchronous, as its author intends: one
// statement runs to completion on the event loop). WAL journal with
// synchronous=FULL: a write is acknowledged only after its commit is fsynced,
// so it survives SIGKILL and power loss. The insert and the count run in one
// BEGIN IMMEDIATE transaction, so the count includes this write and every
// write committed before it, whichever process made it; several processes
// take turns on SQLite's write lock (busy timeout 5 s).

const Database = require('better-sqlite3');
const { StoreUnavailable } = require('./errors');

const DDL = `CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY,
  type TEXT NOT NULL, source TEXT NOT NULL,
  value REAL NOT NULL, ts_ms INTEGER NOT NULL)`;

function openDb(path) {
  const db = new Database(path, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return db;
}

function sqliteStore(path) {
  const label = `SQLite file ${path}`;
  let db;
  let append;
  let count;
  const guard = (fn) => {
    try {
      return fn();
    } catch (e) {
      throw new StoreUnavailable(label, e);
    }
  };
  return {
    label,
    describe: `${label} (WAL, synchronous=FULL: each acknowledged event is fsynced)`,
    // Once, before the workers start: the journal mode and the table.
    prepare() {
      const d = openDb(path);
      d.exec(DDL);
      d.close();
    },
    open() {
      db = openDb(path);
      db.exec(DDL);
      const insert = db.prepare('INSERT INTO events (type, source, value, ts_ms) VALUES (?, ?, ?, ?)');
      const countAll = db.prepare('SELECT COUNT(*) FROM events').pluck();
      const write = db.transaction((e) => {
        insert.run(e.type, e.source, e.value, e.timestamp);
        return countAll.get();
      });
      append = (e) => guard(() => write.immediate(e));
      count = () => guard(() => countAll.get());
    },
    async append(e) {
      return append(e);
    },
    async count() {
      return count();
    },
    reset() {
      const d = openDb(path);
      d.exec(DDL);
      d.exec('DELETE FROM events');
      d.close();
    },
    async close() {
      if (db) db.close();
    },
  };
}

module.exports = { sqliteStore };

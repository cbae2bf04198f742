'use strict';
// node reset.js: empties the event-log store named by STORE (the plan's `reset`).
const { openStore } = require('./stores');

const store = openStore(process.env.STORE, { cores: 1, workers: 1, worker: 0 });
Promise.resolve(store.reset()).then(
  () => process.exit(0),
  (e) => {
    console.error(`reset: ${store.label}: ${e.message}`);
    process.exit(1);
  },
);

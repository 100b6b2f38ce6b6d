'use strict';
// `meld migrate`: Postgres (TypeORM migrations) and ClickHouse (numbered SQL files).
// Uses the built libs, so it runs the same code as the k8s migrate Job.
const path = require('node:path');
const { root, step } = require('../lib');

async function migrate(env) {
  const done = step(`migrations (${new URL(env.MELD_POSTGRES_URL).pathname.slice(1)}, clickhouse ${env.MELD_CLICKHOUSE_DB})`);
  const lines = [];
  const log = (...args) => lines.push(args[args.length - 1]);
  const { migratePostgres } = require(path.join(root, 'libs/db/dist'));
  await migratePostgres(env.MELD_POSTGRES_URL, log);
  const { createClickHouse, migrateClickHouse } = require(path.join(root, 'libs/clickhouse/dist'));
  const client = createClickHouse({ url: env.MELD_CLICKHOUSE_URL, database: env.MELD_CLICKHOUSE_DB });
  try {
    await client.ensureDatabase();
    await migrateClickHouse({ client, database: env.MELD_CLICKHOUSE_DB, log });
  } finally {
    await client.close();
  }
  done(lines.join('; '));
}

const help = 'usage: meld migrate\n  applies the Postgres and ClickHouse migrations (the MELD_* URLs, else the running local stack)';

async function run(args = []) {
  require('../args').parseVerbArgs('migrate', args);
  const stack = require('../lib').readStackEnv();
  const env = { ...require('../lib').stackEnv(stack, process.env.MELD_PROFILE === 'test' ? 'test' : 'dev'), ...pick(process.env) };
  await migrate(env);
  return 0;
}

function pick(source) {
  return Object.fromEntries(Object.entries(source).filter(([k]) => k.startsWith('MELD_')));
}

module.exports = { migrate, run, help };

'use strict';
// Init container of every app Deployment (ADR 0171): waits until the stores this app uses
// have the schema and topics this image expects, i.e. until the migrate and topics Jobs of
// the same rollout finished. Reads only; never migrates (one Job does that, not every pod).
// Exits 0 when everything is there; otherwise retries every 3 s until the pod is deleted.
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const RETRY_MS = 3000;

/** What is still missing for `app`, as short lines naming no URL or credential. */
async function missing(app, env) {
  const apps = require(path.join(root, 'libs/contracts/src/apps.json'));
  const stores = apps[app]?.stores;
  if (!stores) throw new Error(`MELD_APP: unknown app "${app}"`);
  const out = [];
  if (stores.includes('postgres')) {
    const { postgresMigrationsPending } = require(path.join(root, 'libs/db/dist'));
    if (await postgresMigrationsPending(env.MELD_POSTGRES_URL)) out.push('postgres: migrations pending');
  }
  if (stores.includes('clickhouse')) {
    const { createClickHouse, pendingClickHouseMigrations } = require(path.join(root, 'libs/clickhouse/dist'));
    const client = createClickHouse({ url: env.MELD_CLICKHOUSE_URL, database: env.MELD_CLICKHOUSE_DB || 'meld' });
    try {
      const pending = await pendingClickHouseMigrations(client);
      if (pending.length) out.push(`clickhouse: migrations pending (${pending.map((f) => f.version).join(', ')})`);
    } finally {
      await client.close();
    }
  }
  if (stores.includes('kafka')) {
    const { missingTopics } = require(path.join(root, 'libs/kafka/dist'));
    const { allTopicNames } = require(path.join(root, 'libs/contracts/dist'));
    const brokers = (env.MELD_KAFKA_BROKERS || '').split(',').filter(Boolean);
    const absent = await missingTopics(brokers, allTopicNames());
    if (absent.length) out.push(`kafka: topics missing (${absent.join(', ')})`);
  }
  return out;
}

async function main() {
  const app = process.env.MELD_APP;
  for (;;) {
    let waiting;
    try {
      waiting = await missing(app, process.env);
    } catch (err) {
      // A store not reachable yet is a reason to wait, not to crash-loop; the message is the
      // driver's (no URL: the drivers' connection errors name host and port only).
      waiting = [`not reachable yet: ${err && err.message ? err.message.split('\n')[0] : String(err)}`];
      if (/unknown app/.test(waiting[0])) throw err;
    }
    if (waiting.length === 0) {
      console.log(`await-schema: ${app}: schema and topics are in place`);
      return;
    }
    console.log(`await-schema: ${app}: waiting for ${waiting.join('; ')}`);
    await new Promise((r) => setTimeout(r, RETRY_MS));
  }
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(`await-schema: ${err.message}`);
      process.exit(1);
    },
  );
}

module.exports = { missing };

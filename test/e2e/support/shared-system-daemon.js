'use strict';
// The shared e2e system (test/e2e/support/shared-system.ts): the eight apps as processes on stores
// of their own (a Postgres database, a Redis database, a Kafka broker, an SMSC simulator; the
// shared ClickHouse under projects of their own), run by this detached process for the Jest
// process that asked for it (its owner), with the settings that process gives it in the environment. On the shared test database its outbox relays and
// messaging's sweep would take the rows of the systems other e2e suites run meanwhile (ADR 0306). It writes `file` once the system is ready and stops everything
// when the owner exits, however it exits, or on SIGTERM. Boots cost ~15 s of two cores each;
// the e2e suites that need no settings of their own share this one (ADR 0352).
const fs = require('node:fs');
const path = require('node:path');

const [file, ownerPid, gatewayPort] = process.argv.slice(2);
const root = path.join(__dirname, '../../..');
const { startApps } = require(path.join(root, 'tools/cli/apps.js'));
const stack = require(path.join(root, 'tools/stack'));
const { spawnSmsc } = require(path.join(root, 'tools/smsc/spawn.js'));

const brokerName = `e2e-shared-${ownerPid}`;
/** Redis database 3 of the stack's Redis: 0 is the stack's, 1 the tests', 2 messaging's specs'. */
const REDIS_DATABASE = '/3';
let database;
let smsc;
let supervisor;
let stopping = false;

async function stop(code) {
  if (stopping) return;
  stopping = true;
  fs.rmSync(file, { force: true });
  await supervisor?.stop().catch(() => undefined);
  await stack.stopBroker(brokerName).catch(() => undefined);
  await smsc?.stop().catch(() => undefined);
  await database?.drop().catch(() => undefined);
  process.exit(code);
}

async function main() {
  const { createOwnDatabase } = require(path.join(root, 'libs/db/dist'));
  database = await createOwnDatabase(process.env.MELD_POSTGRES_URL, 'meld_test_e2e_shared');
  const redis = new URL(process.env.MELD_REDIS_URL);
  redis.pathname = REDIS_DATABASE;
  await flushRedis(redis.toString());
  smsc = await spawnSmsc();
  const { brokers } = await stack.startBroker({ name: brokerName });
  const stores = { MELD_POSTGRES_URL: database.url, MELD_REDIS_URL: redis.toString(), MELD_KAFKA_BROKERS: brokers, MELD_SMSC_URL: smsc.smppUrl };
  supervisor = startApps({
    env: { ...process.env, LOG_LEVEL: 'warn', MELD_RATE_LIMIT_NAMESPACE: brokerName, ...stores },
    gatewayPort: Number(gatewayPort),
    logDir: path.join(root, '.stack/logs/e2e-shared'),
  });
  await supervisor.ready(180000);
  const system = { base: `http://127.0.0.1:${gatewayPort}`, gatewayPort: Number(gatewayPort), brokers, postgresUrl: database.url, smppUrl: smsc.smppUrl, controlUrl: smsc.controlUrl, pid: process.pid };
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(system));
  fs.renameSync(`${file}.tmp`, file);
}

/** Queues and limits a previous run left in the database (a SIGKILLed run never cleaned up). */
async function flushRedis(url) {
  const Redis = require('ioredis');
  const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  await client.connect();
  await client.flushdb();
  client.disconnect();
}

const ownerAlive = () => {
  try {
    process.kill(Number(ownerPid), 0);
    return true;
  } catch {
    return false;
  }
};
setInterval(() => !ownerAlive() && stop(0), 1000);
process.on('SIGTERM', () => stop(0));
process.on('SIGINT', () => stop(0));
main().catch((err) => {
  console.error(`the shared e2e system did not start: ${err.stack || err.message}`);
  stop(1);
});

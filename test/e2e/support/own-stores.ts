import { join } from 'node:path';
import { privateDatabase } from '@meld/fixtures';
import { testEnv } from '@meld/testing';
import { startPrivateRedis } from '../../../apps/messaging/test/durability';

const { spawnSmsc } = require(join(__dirname, '../../../tools/smsc/spawn.js'));

export interface OwnStores {
  /** MELD_POSTGRES_URL, MELD_REDIS_URL and MELD_SMSC_URL of the suite's own stores, for its apps. */
  env: { MELD_POSTGRES_URL: string; MELD_REDIS_URL: string; MELD_SMSC_URL: string };
  stop(): Promise<void>;
}

/**
 * A migrated Postgres database, a Redis and an SMSC simulator of the suite's own, for a system of
 * apps that runs beside other suites' systems (ADR 0306): on the shared ones, its outbox relays
 * would publish their rows, messaging's sweep and worker would take their messages and jobs (the
 * queue is named the same in every system), and its SMPP session would be sent their receipts.
 * ClickHouse stays the shared one (rows told apart by project), the broker is the system's own.
 */
export async function ownStores(name: string): Promise<OwnStores> {
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const database = await privateDatabase(testEnv().postgresUrl, name);
    stops.push(() => database.drop());
    const redis = await startPrivateRedis();
    stops.push(() => redis.stop());
    const smsc: { smppUrl: string; stop(): Promise<void> } = await spawnSmsc();
    stops.push(() => smsc.stop());
    return { env: { MELD_POSTGRES_URL: database.url, MELD_REDIS_URL: redis.url, MELD_SMSC_URL: smsc.smppUrl }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

import { randomUUID } from 'node:crypto';
import { bootstrapApp, meldAppModule } from '@meld/platform';
import { testEnv, waitFor } from '@meld/testing';
import { appDefinition } from '../src/app.definition';
import { SINK_OPTIONS, sinkOptions } from '../src/sinks/sink-options';
import { SinksConsumer } from '../src/sinks/sinks.consumer';

/**
 * The probes app in-process on the test stores, with sink groups of their own (apps started
 * elsewhere on the same broker must not take these partitions) that start at the end of the
 * topics. `clickhouseUrl` puts a TcpProxy between the app and ClickHouse; `maxAttempts` overrides
 * the sinks' bound on failures that are not the store being down.
 */
export async function startProbes(options: { clickhouseUrl?: string; maxAttempts?: number } = {}) {
  const env = testEnv();
  const tag = randomUUID();
  const groups = { eventsGroupId: `probes-events-test-${tag}`, audienceGroupId: `probes-audience-test-${tag}` };
  const app = await bootstrapApp({
    app: 'probes',
    module: meldAppModule(
      {
        ...appDefinition,
        providers: [...(appDefinition.providers ?? []), { provide: SINK_OPTIONS, useValue: { ...sinkOptions({}), fromBeginning: false, ...groups, ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}) } }],
      },
      {
        LOG_LEVEL: process.env.PROBES_TEST_LOG_LEVEL ?? 'silent',
        MELD_ALLOW_DEV_SECRETS: '1',
        MELD_POSTGRES_URL: env.postgresUrl,
        MELD_CLICKHOUSE_URL: options.clickhouseUrl ?? env.clickhouseUrl,
        MELD_CLICKHOUSE_DB: env.clickhouseDatabase,
        MELD_REDIS_URL: env.redisUrl,
        MELD_KAFKA_BROKERS: env.kafkaBrokers.join(','),
      },
    ),
    host: '127.0.0.1',
    port: 0,
  });
  await app.get(SinksConsumer).started();
  return { app, groups };
}

/**
 * New groups start at the end of a topic (not the backlog other tests left): once a canary sent
 * with `send` is `stored`, every partition's start position is fixed and nothing later is skipped.
 */
export async function awaitPositioned(what: string, send: () => Promise<unknown>, stored: () => Promise<boolean>): Promise<void> {
  await waitFor(`${what} consumer positioned`, async () => {
    await send();
    return waitFor('canary', async () => (await stored()) || undefined, { timeoutMs: 2000 }).catch(() => false);
  }, { timeoutMs: 40000 });
}

// The apps' init container (ADR 0171) against the real stores: nothing missing on the migrated
// test databases; ClickHouse migrations named while the database has none of them.
import { testEnv } from '@meld/testing';

const { missing } = require('./await-schema.js') as { missing(app: string, env: NodeJS.ProcessEnv): Promise<string[]> };

const env = testEnv();
const stores = {
  MELD_POSTGRES_URL: env.postgresUrl,
  MELD_CLICKHOUSE_URL: env.clickhouseUrl,
  MELD_CLICKHOUSE_DB: env.clickhouseDatabase,
  MELD_KAFKA_BROKERS: env.kafkaBrokers.join(','),
};

it('finds nothing missing once migrate and topics ran, for an app of every store', async () => {
  for (const app of ['gateway', 'audience', 'probes', 'identity-merge']) expect([app, await missing(app, stores)]).toEqual([app, []]);
});

it('names the ClickHouse migrations a database still lacks, creating nothing', async () => {
  const waiting = await missing('audience', { ...stores, MELD_CLICKHOUSE_DB: `${env.clickhouseDatabase}_never_migrated` });
  expect(waiting).toEqual([expect.stringMatching(/^clickhouse: migrations pending \(1, 2, 3/)]);
});

it('refuses an unknown app', async () => {
  await expect(missing('nope', stores)).rejects.toThrow('MELD_APP: unknown app "nope"');
});

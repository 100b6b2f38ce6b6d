import { randomUUID } from 'node:crypto';
import { defaultAttributionConfig, defaultGeneralConfig } from '@meld/contracts';
import { DATA_SOURCE, DataSourceEntity, OrganizationEntity, ProjectEntity, createDataSource } from '@meld/db';
import { privateDatabase } from '@meld/fixtures';
import { bootstrapApp, meldAppModule } from '@meld/platform';
import { testEnv, waitFor } from '@meld/testing';
import type { Provider } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { CONTACTS_CONSUMER_OPTIONS } from '../src/merge/contacts.consumer';
import { TRIGGERS_CONSUMER_OPTIONS } from '../src/triggers/automation-triggers.consumer';

/**
 * identity-merge in-process on the test stores, with consumer groups of its own: apps started
 * elsewhere on the same broker (npm start, e2e) must not take partitions of the test. Later
 * providers override the app's. `postgresUrl` puts a TcpProxy between the app and Postgres.
 */
export async function startIdentityMerge(options: { mergeWaitMs?: number; postgresUrl?: string } = {}) {
  const env = testEnv();
  const group = `identity-merge-test-${randomUUID()}`;
  const overrides: Provider[] = [
    { provide: CONTACTS_CONSUMER_OPTIONS, useValue: { groupId: group, fromBeginning: true } },
    { provide: TRIGGERS_CONSUMER_OPTIONS, useValue: { groupId: `${group}-triggers`, fromBeginning: true, mergeWaitMs: options.mergeWaitMs ?? 300_000 } },
  ];
  const app = await bootstrapApp({
    app: 'identity-merge',
    module: meldAppModule(
      { ...appDefinition, providers: [...(appDefinition.providers ?? []), ...overrides] },
      {
        LOG_LEVEL: process.env.MERGE_TEST_LOG_LEVEL ?? 'silent',
        MELD_ALLOW_DEV_SECRETS: '1',
        MELD_POSTGRES_URL: options.postgresUrl ?? env.postgresUrl,
        MELD_KAFKA_BROKERS: env.kafkaBrokers.join(','),
      },
    ),
    host: '127.0.0.1',
    port: 0,
  });
  const db = app.get<DataSource>(DATA_SOURCE);
  await waitFor('identity-merge connected to Postgres', async () => db.isInitialized);
  return { app, db, group };
}

/** A project merging on `_email` with two data sources, `crm` (priority 1) and `shop`. */
export async function mergeProject(db: DataSource, prefix: string) {
  const tag = randomUUID().slice(0, 8);
  const org = await db.getRepository(OrganizationEntity).save({ name: `Org ${tag}`, plan: 'm' as const });
  const p = await db.getRepository(ProjectEntity).save({
    uid: `${prefix}-${tag}`,
    organizationId: org.id,
    name: `Merge ${tag}`,
    generalConfig: defaultGeneralConfig() as unknown as ProjectEntity['generalConfig'],
    attributionConfig: defaultAttributionConfig(),
    mergingAttributes: ['_email'],
  });
  const crm = await db.getRepository(DataSourceEntity).save({ projectId: p.id, uid: `crm-${tag}`, name: 'crm', connector: 'crm', priority: 1 });
  const shop = await db.getRepository(DataSourceEntity).save({ projectId: p.id, uid: `shop-${tag}`, name: 'shop', connector: 'shop' });
  return { id: p.id, crm: crm.id, shop: shop.id };
}

/**
 * A Postgres database of the suite's own, created before its tests and dropped after them, for a
 * suite that reads audience_outbox, which other suites' identity-merge apps drain. `db()` is its
 * connection once the suite started.
 */
export function ownDatabase(name: string, poolSize = 2): { db: () => DataSource } {
  let db: DataSource | undefined;
  let database: Awaited<ReturnType<typeof privateDatabase>> | undefined;
  beforeAll(async () => {
    database = await privateDatabase(testEnv().postgresUrl, name);
    db = createDataSource({ url: database.url, applicationName: `${name.replaceAll('_', '-')}-test`, poolSize });
    await db.initialize();
  }, 60000);
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });
  return { db: () => db! };
}

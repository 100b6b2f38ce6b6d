import { randomUUID } from 'node:crypto';
import { Topics, audienceChange, defaultAttributionConfig, defaultGeneralConfig, keys, type AudienceChange, type ContactChange } from '@meld/contracts';
import { DATA_SOURCE, DataSourceEntity, OrganizationEntity, ProjectEntity } from '@meld/db';
import { createProducer, type Producer } from '@meld/kafka';
import { bootstrapApp, meldAppModule } from '@meld/platform';
import { testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { CONTACTS_CONSUMER_OPTIONS } from '../src/merge/contacts.consumer';

/** The identity-merge app in-process: meld.contacts.v1 in, audience tables and meld.audience.v1 out. */
describe('identity-merge consumer', () => {
  let app: INestApplication;
  let db: DataSource;
  let producer: Producer;
  let consumer: Consumer;
  const published: AudienceChange[] = [];
  const projectId = { value: '' };

  beforeAll(async () => {
    const env = testEnv();
    app = await bootstrapApp({
      app: 'identity-merge',
      // A group of its own: apps started elsewhere on the same broker (npm start, e2e) must
      // not take partitions of this test. The later provider overrides the app's.
      module: meldAppModule({ ...appDefinition, providers: [...(appDefinition.providers ?? []), { provide: CONTACTS_CONSUMER_OPTIONS, useValue: { groupId: `identity-merge-test-${randomUUID()}`, fromBeginning: true } }] }, {
        LOG_LEVEL: process.env.MERGE_TEST_LOG_LEVEL ?? 'silent',
        MELD_PRINCIPAL_SECRET: 'meld-test-principal-secret',
        MELD_POSTGRES_URL: env.postgresUrl,
        MELD_KAFKA_BROKERS: env.kafkaBrokers.join(','),
      }),
      host: '127.0.0.1',
      port: 0,
    });
    db = app.get<DataSource>(DATA_SOURCE);
    await waitFor('identity-merge connected to Postgres', async () => db.isInitialized);
    producer = createProducer({ brokers: env.kafkaBrokers, clientId: 'identity-merge-test' });
    const kafka = new Kafka({ brokers: env.kafkaBrokers, clientId: 'identity-merge-test', logLevel: logLevel.NOTHING });
    consumer = kafka.consumer({ groupId: `identity-merge-test-${randomUUID()}`, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: Topics.audience, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const value = audienceChange.parse(JSON.parse(message.value?.toString() ?? 'null'));
        if (value.projectId === projectId.value) published.push(value);
      },
    });
  }, 60000);

  afterAll(async () => {
    await consumer?.disconnect();
    await producer?.disconnect();
    await app?.close();
  });

  it('merges what ingest committed and publishes the snapshots after commit', async () => {
    const tag = randomUUID().slice(0, 8);
    const org = await db.getRepository(OrganizationEntity).save({ name: `Org ${tag}`, plan: 'm' as const });
    const project = await db.getRepository(ProjectEntity).save({
      uid: `merge-consumer-${tag}`,
      organizationId: org.id,
      name: `Merge ${tag}`,
      generalConfig: defaultGeneralConfig() as unknown as ProjectEntity['generalConfig'],
      attributionConfig: defaultAttributionConfig(),
      mergingAttributes: ['_email'],
    });
    projectId.value = project.id;
    const crm = await db.getRepository(DataSourceEntity).save({ projectId: project.id, uid: `crm-${tag}`, name: 'crm', connector: 'crm', priority: 1 });
    const shop = await db.getRepository(DataSourceEntity).save({ projectId: project.id, uid: `shop-${tag}`, name: 'shop', connector: 'shop' });
    const at = new Date().toISOString();
    const send = async (dataSourceId: string, userId: string, email: string) => {
      await db.query(
        `INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, attribute_at, version) VALUES ($1, $2, $3, $4, $5, 1)`,
        [project.id, dataSourceId, userId, JSON.stringify({ _email: email }), JSON.stringify({ _email: at })],
      );
      const change: ContactChange = { schemaVersion: 1, kind: 'upsert', projectId: project.id, dataSourceId, userId, version: 1, at, patch: { _email: email } };
      await producer.send(Topics.contacts, [{ key: keys.sourceContact(project.id, dataSourceId, userId), value: change }]);
    };
    await send(crm.id, 'a', 'a@x.com');
    const first = await waitFor('the first audience contact', async () => published.find((m) => m.kind === 'snapshot'), { timeoutMs: 45000 });
    await send(shop.id, 'b', 'A@x.com ');
    await waitFor('the merged snapshot', async () => published.find((m) => m.kind === 'snapshot' && m.dsContactIds.length === 2), { timeoutMs: 30000 });
    const rows = await db.query(`SELECT id, ds_contact_ids FROM audience_contacts WHERE project_id = $1`, [project.id]);
    expect(rows).toEqual([{ id: first.audienceId, ds_contact_ids: [`${crm.id}/a`, `${shop.id}/b`].sort() }]);
    // Everything published left the outbox.
    await waitFor('the outbox drained', async () => (await db.query(`SELECT count(*)::int AS n FROM audience_outbox WHERE value->>'projectId' = $1`, [project.id]))[0].n === 0);
  }, 90000);
});

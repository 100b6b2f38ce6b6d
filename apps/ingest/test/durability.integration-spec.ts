import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Topics } from '@meld/contracts';
import { testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { Kafka, logLevel } from 'kafkajs';
import type { DataSource } from 'typeorm';
import { startIngest } from './app.fixture';
import { type Json, type PrincipalSigner, principalSigner, privateDatabase, seedTenancy } from '@meld/fixtures';

// Acknowledged means durable: with Kafka down an event is refused (5xx, its id not marked,
// so the client's retry goes through once), while a contact write is accepted into the
// outbox and published when Kafka is back. A private dev broker is taken down and up with
// SIGUSR1 / SIGUSR2, so the shared broker other suites use is never touched; the app gets a
// database of its own too, or its relay would drain other suites' outbox rows to this broker.
const stack = require(join(__dirname, '../../../tools/stack'));

describe('ingest durability across a Kafka outage', () => {
  let broker: { name: string; brokers: string; pid: number };
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  let sign: PrincipalSigner;

  let database: Awaited<ReturnType<typeof privateDatabase>> | undefined;

  beforeAll(async () => {
    database = await privateDatabase(testEnv().postgresUrl, 'ingest_durability');
    broker = await stack.startBroker({ name: `ingest-durability-${process.pid}` });
    ({ app, base, db } = await startIngest({ MELD_KAFKA_BROKERS: broker.brokers, MELD_POSTGRES_URL: database.url }));
    tenancy = await seedTenancy(db);
    sign = principalSigner(tenancy, { kind: 'datasource', scopes: ['PROJECT_INGEST_WRITE'], dataSourceId: tenancy.dataSource.id }, 'ingest');
  }, 60000);

  afterAll(async () => {
    if (broker) process.kill(broker.pid, 'SIGUSR2');
    await app?.close();
    if (broker) await stack.stopBroker(broker.name);
    await database?.drop();
  });

  const post = async (path: string, body: unknown) => {
    const url = `${base}/v1/project/${tenancy.project.uid}/datasource/${tenancy.dataSource.id}/stream${path}`;
    const res = await fetch(url, { method: 'POST', headers: { ...sign('POST', url), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };

  async function read(topic: string, keep: (v: Json) => boolean) {
    const kafka = new Kafka({ brokers: broker.brokers.split(','), clientId: 'durability-reader', logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `durability-${randomUUID()}`, maxWaitTimeInMs: 100 });
    const seen: Json[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void (keep(JSON.parse(message.value!.toString())) && seen.push(JSON.parse(message.value!.toString()))) });
    return { seen, stop: () => consumer.disconnect() };
  }

  it('refuses events while Kafka is down and accepts them once after; contacts wait in the outbox', async () => {
    expect((await post('/contacts', [{ _user_id: 'd-1' }])).status).toBe(202);
    const event = { _user_id: 'd-1', _event_id: `d-${randomUUID()}`, _event_type: 'purchase', _event_parameters: { 'product-id': 'p' } };

    process.kill(broker.pid, 'SIGUSR1');
    const refused = await post('/events', [event]);
    expect(refused.status).toBeGreaterThanOrEqual(500);
    expect(await db.query(`SELECT 1 FROM event_ids WHERE project_id = $1 AND event_id = $2`, [tenancy.project.id, event._event_id])).toEqual([]);
    expect((await post('/contacts', [{ _user_id: 'd-2', _first_name: 'Queued' }])).status).toBe(202);

    process.kill(broker.pid, 'SIGUSR2');
    const accepted = await waitFor('the event accepted once Kafka is back', async () => {
      const r = await post('/events', [event]);
      return r.status === 202 ? r : null;
    }, { timeoutMs: 40000, intervalMs: 500 });
    expect(accepted.body.entity.successful).toBe(1);
    expect((await post('/events', [event])).status).toBe(202); // a resent id: success, not produced again

    const events = await read(Topics.events, (v) => v.projectId === tenancy.project.id);
    const contacts = await read(Topics.contacts, (v) => v.projectId === tenancy.project.id);
    try {
      await waitFor('the queued contact published', async () => contacts.seen.some((v) => v.userId === 'd-2'), { timeoutMs: 30000 });
      await waitFor('the event published', async () => events.seen.length >= 1, { timeoutMs: 20000 });
      await new Promise((r) => setTimeout(r, 500));
      expect(events.seen.filter((v) => v.eventId === event._event_id)).toHaveLength(1);
      expect(contacts.seen.map((v) => v.userId).sort()).toEqual(['d-1', 'd-2']);
    } finally {
      await Promise.all([events.stop(), contacts.stop()]);
    }
  }, 120000);
});

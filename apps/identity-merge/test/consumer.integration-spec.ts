import { randomUUID } from 'node:crypto';
import { Topics, audienceChange, keys, type AudienceChange, type ContactChange } from '@meld/contracts';
import { createProducer, type Producer } from '@meld/kafka';
import { testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import type { DataSource } from 'typeorm';
import { mergeProject, startIdentityMerge } from './app.fixture';

interface DeadLetter {
  key: string;
  headers: Record<string, string>;
}

/** The identity-merge app in-process: meld.contacts.v1 in, audience tables and meld.audience.v1 out. */
describe('identity-merge consumer', () => {
  let app: INestApplication;
  let db: DataSource;
  let producer: Producer;
  const readers: Consumer[] = [];
  const published: AudienceChange[] = [];
  const deadLetters: DeadLetter[] = [];
  /** This test's consumer group: other tests' identity-merge instances read the same topic and dead-letter the same poison message. */
  let group: string;
  const projects = new Set<string>();

  /** Collects what this test's projects produce on `topic` (keys start with the project id). */
  async function read(topic: string, onMessage: (key: string, value: Buffer | null, headers: Record<string, string>) => void) {
    const kafka = new Kafka({ brokers: testEnv().kafkaBrokers, clientId: 'identity-merge-test', logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: `identity-merge-test-${randomUUID()}`, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const key = message.key?.toString() ?? '';
        if (!projects.has(key.slice(0, key.indexOf('/')))) return;
        onMessage(key, message.value, Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])));
      },
    });
    readers.push(consumer);
  }

  beforeAll(async () => {
    const env = testEnv();
    ({ app, db, group } = await startIdentityMerge());
    producer = createProducer({ brokers: env.kafkaBrokers, clientId: 'identity-merge-test' });
    await Promise.all([
      read(Topics.audience, (_k, value) => published.push(audienceChange.parse(JSON.parse(value?.toString() ?? 'null')))),
      read(`${Topics.contacts}.dlq`, (key, _v, headers) => {
        if (headers['dlq-group'] === group) deadLetters.push({ key, headers });
      }),
    ]);
  }, 60000);

  afterAll(async () => {
    await Promise.all(readers.map((r) => r.disconnect()));
    await producer?.disconnect();
    await app?.close();
  });

  const project = async () => {
    const p = await mergeProject(db, 'merge-consumer');
    projects.add(p.id);
    return p;
  };

  /** What ingest commits (unless `row` is false) and publishes for new contacts, in one produce call. */
  async function send(projectId: string, contacts: Array<{ dataSourceId: string; userId: string; email: string; row?: boolean }>) {
    const at = new Date().toISOString();
    for (const c of contacts.filter((x) => x.row !== false)) {
      await db.query(`INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, attribute_at, version) VALUES ($1, $2, $3, $4, $5, 1)`, [
        projectId,
        c.dataSourceId,
        c.userId,
        JSON.stringify({ _email: c.email }),
        JSON.stringify({ _email: at }),
      ]);
    }
    const change = (c: (typeof contacts)[number]): ContactChange => ({ schemaVersion: 1, kind: 'upsert', projectId, dataSourceId: c.dataSourceId, userId: c.userId, version: 1, at, patch: { _email: c.email } });
    await producer.send(
      Topics.contacts,
      contacts.map((c) => ({ key: keys.sourceContact(projectId, c.dataSourceId, c.userId), value: change(c) })),
    );
  }

  const members = async (projectId: string) => (await db.query(`SELECT count(*)::int AS n FROM audience_members WHERE project_id = $1`, [projectId]))[0].n as number;

  it('merges what ingest committed and publishes the snapshots after commit', async () => {
    const p = await project();
    await send(p.id, [{ dataSourceId: p.crm, userId: 'a', email: 'a@x.com' }]);
    const first = await waitFor('the first audience contact', async () => published.find((m) => m.projectId === p.id && m.kind === 'snapshot'), { timeoutMs: 45000 });
    await send(p.id, [{ dataSourceId: p.shop, userId: 'b', email: 'A@x.com ' }]);
    await waitFor('the merged snapshot', async () => published.find((m) => m.projectId === p.id && m.kind === 'snapshot' && m.dsContactIds.length === 2), { timeoutMs: 30000 });
    const rows = await db.query(`SELECT id, ds_contact_ids FROM audience_contacts WHERE project_id = $1`, [p.id]);
    expect(rows).toEqual([{ id: first.audienceId, ds_contact_ids: [`${p.crm}/a`, `${p.shop}/b`].sort() }]);
    // Everything published left the outbox.
    await waitFor('the outbox drained', async () => (await db.query(`SELECT count(*)::int AS n FROM audience_outbox WHERE value->>'projectId' = $1`, [p.id]))[0].n === 0);
  }, 90000);

  it('merges a batch in steps of several contacts; a message that cannot merge is dead-lettered alone', async () => {
    const p = await project();
    const contacts = Array.from({ length: 40 }, (_, i) => ({ dataSourceId: i % 2 ? p.shop : p.crm, userId: `u${i >> 1}`, email: `u${i >> 1}@x.com` }));
    // A user id Postgres cannot take (NUL): every step holding it fails.
    const poison = { dataSourceId: p.crm, userId: 'bad\u0000id', email: 'bad@x.com', row: false };
    await send(p.id, [...contacts.slice(0, 20), poison, ...contacts.slice(20)]);
    await waitFor('every contact merged', async () => (await members(p.id)) === contacts.length, { timeoutMs: 45000 });
    const audiences: Array<{ n: number }> = await db.query(`SELECT jsonb_array_length(ds_contact_ids) AS n FROM audience_contacts WHERE project_id = $1`, [p.id]);
    expect(audiences.map((a) => a.n)).toEqual(Array(20).fill(2));
    const dead = await waitFor('the poison message dead-lettered', async () => deadLetters.find((d) => d.key.startsWith(p.id)), { timeoutMs: 45000 });
    expect(dead.key).toBe(keys.sourceContact(p.id, poison.dataSourceId, poison.userId));
    expect(dead.headers['dlq-reason']).toBe('retries-exhausted');
    await new Promise((r) => setTimeout(r, 500));
    expect(deadLetters.filter((d) => d.key.startsWith(p.id))).toHaveLength(1);
  }, 120000);
});

import { randomUUID } from 'node:crypto';
import { Topics, keys, type ContactChange } from '@meld/contracts';
import { createProducer, type Producer } from '@meld/kafka';
import { TcpProxy, testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { mergeProject, startIdentityMerge } from './app.fixture';

/** Seconds Postgres is cut for; the issue asks for 60, `MELD_OUTAGE_SECONDS` shortens it while working on this. */
const OUTAGE_SECONDS = Number(process.env.MELD_OUTAGE_SECONDS) || 60;

/**
 * Postgres goes away under load (a TcpProxy cut between identity-merge and the shared store):
 * the consumer pauses and retries until it returns (ADR 0111), nothing is dead-lettered and
 * every contact sent before and during the outage is merged once it is back.
 */
describe('identity-merge through a Postgres outage', () => {
  const env = testEnv();
  let proxy: TcpProxy;
  let app: INestApplication;
  let appDb: DataSource;
  let group: string;
  let direct: Pool;
  let producer: Producer;
  let dlqReader: Consumer;
  const deadLetters: string[] = [];

  beforeAll(async () => {
    proxy = await TcpProxy.start(env.postgresUrl);
    ({ app, db: appDb, group } = await startIdentityMerge({ postgresUrl: proxy.via(env.postgresUrl) }));
    direct = new Pool({ connectionString: env.postgresUrl, max: 2 });
    producer = createProducer({ brokers: env.kafkaBrokers, clientId: 'merge-outage-test' });
    const kafka = new Kafka({ brokers: env.kafkaBrokers, clientId: 'merge-outage-test', logLevel: logLevel.NOTHING });
    dlqReader = kafka.consumer({ groupId: `merge-outage-dlq-${randomUUID()}`, maxWaitTimeInMs: 100 });
    await dlqReader.connect();
    await dlqReader.subscribe({ topic: `${Topics.contacts}.dlq`, fromBeginning: true });
    await dlqReader.run({
      eachMessage: async ({ message }) => {
        if (String(message.headers?.['dlq-group'] ?? '') === group) deadLetters.push(`${message.key?.toString()}: ${String(message.headers?.['dlq-error'])}`);
      },
    });
  }, 60000);

  afterAll(async () => {
    await dlqReader?.disconnect();
    await producer?.disconnect();
    await app?.close();
    await direct?.end();
    await proxy?.stop();
  });

  /** What ingest does for new contacts: commit the rows (Postgres stays up for ingest), then publish. */
  async function send(projectId: string, dataSourceId: string, userIds: string[]) {
    const at = new Date().toISOString();
    for (const userId of userIds) {
      await direct.query(`INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, attribute_at, version) VALUES ($1, $2, $3, $4, $5, 1)`, [
        projectId,
        dataSourceId,
        userId,
        JSON.stringify({ _email: `${userId}@outage.test` }),
        JSON.stringify({ _email: at }),
      ]);
    }
    const change = (userId: string): ContactChange => ({ schemaVersion: 1, kind: 'upsert', projectId, dataSourceId, userId, version: 1, at, patch: { _email: `${userId}@outage.test` } });
    await producer.send(Topics.contacts, userIds.map((u) => ({ key: keys.sourceContact(projectId, dataSourceId, u), value: change(u) })));
  }

  const members = async (projectId: string) => (await direct.query(`SELECT count(*)::int AS n FROM audience_members WHERE project_id = $1`, [projectId])).rows[0].n as number;
  const readyz = async () => {
    const res = await fetch(`${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/readyz`);
    return { status: res.status, body: await res.text() };
  };
  const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => `u${from + i}`);

  it(`merges everything sent before and during a ${OUTAGE_SECONDS} s outage and dead-letters nothing`, async () => {
    const p = await mergeProject(appDb, 'merge-outage');
    await send(p.id, p.crm, ids(0, 100));
    await waitFor('the first contacts merged', async () => (await members(p.id)) >= 20, { timeoutMs: 30000 });

    await proxy.stop();
    const until = Date.now() + OUTAGE_SECONDS * 1000;
    let sent = 100;
    let sawNotReady = false;
    while (Date.now() < until) {
      await send(p.id, p.crm, ids(sent, 25));
      sent += 25;
      const r = await readyz();
      if (r.status === 503 && r.body.includes('postgres')) sawNotReady = true;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(sawNotReady).toBe(true);
    // The group reads the shared topic from the beginning: other tests' poison messages are rightly dead-lettered by it too.
    const ours = () => deadLetters.filter((d) => d.startsWith(`${p.id}/`));
    expect(ours()).toEqual([]);
    await proxy.resume();

    await waitFor(`all ${sent} contacts merged`, async () => (await members(p.id)) === sent, { timeoutMs: 60000, intervalMs: 500 });
    await waitFor('ready again', async () => (await readyz()).status === 200, { timeoutMs: 30000 });
    expect(ours()).toEqual([]);
  }, (OUTAGE_SECONDS + 180) * 1000);
});

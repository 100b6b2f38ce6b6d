import { randomUUID } from 'node:crypto';
import { type ContactChange, Outputs, Topics } from '@meld/contracts';
import type { Json } from '@meld/fixtures';
import { metricsRegistry } from '@meld/platform';
import { waitFor } from '@meld/testing';
import { Kafka, logLevel } from 'kafkajs';
import { startIngestOnPrivateStores } from './app.fixture';

// One message Kafka will not take must not hold back every acknowledged contact behind it
// (ADR 0346). On a private development broker that refuses a partition's record batch above
// Kafka's default `message.max.bytes` (1,048,588 bytes), as Kafka does, and a database of the
// suite's own (its relay drains only this suite's rows):
// - a contact grown over several writes past the 256 KiB a contact may hold is refused at
//   ingest, as an item error naming it, and what was accepted before stays;
// - a backlog of contacts that are each well within the cap (after a Kafka outage) drains,
//   although one relay pass of them is many megabytes per partition;
// - a row Kafka refuses for good (one written before the cap) is set aside in
//   `outbox_dead_letters` with its reason, and the rows behind it are published.
const CAP = 256 * 1024;

describe('an outbox message larger than Kafka takes', () => {
  let ingest: Awaited<ReturnType<typeof startIngestOnPrivateStores>>;
  let consumer: ReturnType<Kafka['consumer']> | undefined;
  /** `meld.contacts.v1` messages of this suite's project: user id, version, bytes. */
  const seen: Array<{ userId: string; version: number; bytes: number }> = [];

  beforeAll(async () => {
    ingest = await startIngestOnPrivateStores('ingest-oversized');
    const kafka = new Kafka({ brokers: ingest.broker.brokers.split(','), clientId: 'oversized-reader', logLevel: logLevel.NOTHING });
    consumer = kafka.consumer({ groupId: `oversized-${randomUUID()}`, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: Topics.contacts, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const v = JSON.parse(message.value!.toString()) as ContactChange;
        if (v.projectId === ingest.tenancy.project.id) seen.push({ userId: v.userId, version: v.version, bytes: message.value!.length });
      },
    });
  }, 90000);

  afterAll(async () => {
    await consumer?.disconnect();
    await ingest?.close();
  });

  const post = (body: unknown) => postTo('/contacts', body);
  const postTo = async (path: string, body: unknown) => {
    const { base, tenancy, dsToken } = ingest;
    const url = `${base}/v1/project/${tenancy.project.uid}/datasource/${tenancy.dataSource.id}/stream${path}`;
    const res = await fetch(url, { method: 'POST', headers: { ...dsToken('POST', url), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  /** `n` custom attributes `<prefix>0…` of `length` characters each. */
  const attributes = (prefix: string, n: number, length: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, `${prefix}${i}:`.padEnd(length, 'x')]));
  const published = (userId: string) => seen.filter((s) => s.userId === userId);
  /** Rows left in the outbox. A pass deletes its rows and commits after Kafka acknowledged them, so a consumer may see them first: wait for it. */
  const outboxDepth = async () => Number((await ingest.db.query(`SELECT count(*) AS n FROM outbox`))[0].n);
  const deadLettered = async () => ((await metricsRegistry.getSingleMetric('meld_outbox_dead_lettered_total')?.get())?.values ?? []).reduce((sum, v) => sum + v.value, 0);

  it('refuses, naming the contact, a write that would grow it past 256 KiB; what it held before is kept and nothing waits behind it', async () => {
    // 100 attributes of 2,000 characters: ~205 KB, within the cap; the second hundred would make ~410 KB.
    const first = await post([{ _user_id: 'grown', ...attributes('a', 100, 2000) }]);
    expect(first.status).toBe(202);
    for (let round = 1; round < 6; round++) {
      const next = await post([{ _user_id: 'grown', ...attributes(`r${round}_`, 100, 2000) }]);
      expect(next.status).toBe(422);
      expect(next.body.entity.items[0]).toEqual({ status: 'error', _user_id: 'grown', errors: { _user_id: [expect.stringMatching(new RegExp(`more than the ${CAP} bytes`))] } });
    }
    // Beside an item that fits: a partial 202.
    const mixed = await post([{ _user_id: 'grown', ...attributes('m', 100, 2000) }, { _user_id: 'beside', _first_name: 'Beside' }]);
    expect(mixed.status).toBe(202);
    expect(mixed.body.entity).toMatchObject({ successful: 1, failed: 1, items: [{ status: 'error', _user_id: 'grown' }, { status: 'success', _user_id: 'beside' }] });
    // Through an event's `_user_data` too: the event fails with it (rule 2).
    const event = await postTo('/events', [{ _user_id: 'grown', _event_id: `e-${randomUUID()}`, _event_type: 'purchase', _event_parameters: { 'product-id': 'p' }, _user_data: attributes('u', 100, 2000) }]);
    expect(event.status).toBe(422);
    expect(event.body.entity.items[0]).toEqual({ status: 'error', _user_id: 'grown', errors: { _user_data: [expect.stringMatching(new RegExp(`more than the ${CAP} bytes`))] } });
    // Clearing is never refused, and makes room again.
    expect((await post([{ _user_id: 'grown', ...Object.fromEntries(Object.keys(attributes('a', 50, 1)).map((k) => [k, null])) }])).status).toBe(202);
    expect((await post([{ _user_id: 'grown', ...attributes('b', 40, 2000) }])).status).toBe(202);

    expect((await post([{ _user_id: 'after-grown' }])).status).toBe(202);
    await waitFor('the contacts written after it published', async () => published('after-grown').length > 0 && published('beside').length > 0, { timeoutMs: 30000 });
    await waitFor('every accepted version of it published', async () => published('grown').some((s) => s.version === 3), { timeoutMs: 30000 });
    expect(Math.max(...published('grown').map((s) => s.bytes))).toBeLessThan(CAP + 1024);
    const [row] = await ingest.db.query(`SELECT attributes FROM source_contacts WHERE project_id = $1 AND user_id = 'grown'`, [ingest.tenancy.project.id]);
    expect(Object.keys(row.attributes).sort()).toEqual([...Object.keys(attributes('a', 100, 1)).slice(50), ...Object.keys(attributes('b', 40, 1))].sort());
    await waitFor('the outbox empty', async () => (await outboxDepth()) === 0);
  }, 120000);

  it('drains a backlog of many contacts within the cap, although a pass of them is megabytes per partition', async () => {
    // 108 contacts of ~100 KB written while Kafka is down: one relay pass of ~11 MB, ~1.3 MB per
    // partition, more than Kafka takes in one record batch although every message fits.
    process.kill(ingest.broker.pid, 'SIGUSR1');
    try {
      for (let batch = 0; batch < 12; batch++) {
        const items = Array.from({ length: 9 }, (_, i) => ({ _user_id: `backlog-${batch * 9 + i}`, ...attributes('c', 50, 2000) }));
        const res = await post(items);
        expect(res.status).toBe(202);
        expect(res.body.entity.successful).toBe(9);
      }
    } finally {
      process.kill(ingest.broker.pid, 'SIGUSR2');
    }
    await waitFor('the backlog published', async () => new Set(seen.filter((s) => s.userId.startsWith('backlog-')).map((s) => s.userId)).size === 108, { timeoutMs: 60000, intervalMs: 250 });
    expect(await deadLettered()).toBe(0);
    await waitFor('the outbox empty', async () => (await outboxDepth()) === 0);
  }, 120000);

  it('sets aside a row Kafka refuses for good, with its reason and the metric, and publishes the rows behind it', async () => {
    // A contact of 1.2 MB queued before the cap existed, as the old write path did.
    const change: ContactChange = {
      schemaVersion: 1,
      kind: 'upsert',
      projectId: ingest.tenancy.project.id,
      dataSourceId: ingest.tenancy.dataSource.id,
      userId: 'legacy-huge',
      version: 1,
      at: new Date().toISOString(),
      patch: attributes('d', 600, 2000),
    };
    const before = await deadLettered();
    await ingest.db.transaction(async (tx) => {
      await tx.query(`INSERT INTO outbox (topic, key, value) VALUES ($1, $2, $3)`, [Outputs.contacts.topic, Outputs.contacts.key(change), JSON.stringify(change)]);
      // Behind it, in the same pass.
      await tx.query(`INSERT INTO outbox (topic, key, value) VALUES ($1, $2, $3)`, [Outputs.contacts.topic, Outputs.contacts.key({ ...change, userId: 'legacy-small' }), JSON.stringify({ ...change, userId: 'legacy-small', patch: {} })]);
    });
    expect((await post([{ _user_id: 'after-legacy' }])).status).toBe(202);
    await waitFor('the rows behind it published', async () => published('after-legacy').length > 0 && published('legacy-small').length > 0, { timeoutMs: 30000 });
    expect(published('legacy-huge')).toEqual([]);
    // Set aside in the pass's transaction, which commits (and then counts) after the rows beside it were published.
    const dead = await waitFor('the row set aside', async () => {
      const rows = await ingest.db.query(`SELECT outbox, topic, key, error, octet_length(value::text) AS bytes FROM outbox_dead_letters`);
      return rows.length ? rows : undefined;
    });
    expect(dead).toEqual([{ outbox: 'outbox', topic: Topics.contacts, key: Outputs.contacts.key(change), error: expect.stringMatching(/MESSAGE_TOO_LARGE/), bytes: expect.any(Number) }]);
    expect(dead[0].bytes).toBeGreaterThan(1048588);
    await waitFor('the set-aside row counted', async () => (await deadLettered()) - before >= 1);
    expect((await deadLettered()) - before).toBe(1);
    await waitFor('the outbox empty', async () => (await outboxDepth()) === 0);
  }, 120000);
});

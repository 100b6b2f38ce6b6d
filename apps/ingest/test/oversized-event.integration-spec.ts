import { randomUUID } from 'node:crypto';
import { Topics } from '@meld/contracts';
import type { Json } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import { Kafka, logLevel } from 'kafkajs';
import { MAX_PARAMETERS_BYTES } from '../src/events/event-parameters';
import { startIngestOnPrivateStores } from './app.fixture';

// An event's message carries its `_user_data` whole (ADR 0346): without a cap of its own, one
// near the 1 MiB body limit made a message Kafka refuses, a 5xx the client retries for ever.
// On a private development broker that refuses a record batch above Kafka's default
// `message.max.bytes` (1,048,588 bytes), as Kafka does, and a database of the suite's own.
const CAP = 256 * 1024;
const PRODUCE_REQUEST_MAX = 900 * 1024;

describe('an event larger than its message may be', () => {
  let ingest: Awaited<ReturnType<typeof startIngestOnPrivateStores>>;
  let consumer: ReturnType<Kafka['consumer']> | undefined;
  /** `meld.events.v1` messages of this suite's project: event id and the record's key + value + headers bytes. */
  const seen: Array<{ eventId: string; bytes: number }> = [];

  beforeAll(async () => {
    ingest = await startIngestOnPrivateStores('ingest-oversized-event');
    const kafka = new Kafka({ brokers: ingest.broker.brokers.split(','), clientId: 'oversized-event-reader', logLevel: logLevel.NOTHING });
    consumer = kafka.consumer({ groupId: `oversized-event-${randomUUID()}`, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: Topics.events, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const v = JSON.parse(message.value!.toString());
        if (v.projectId !== ingest.tenancy.project.id || v.kind) return;
        const headers = Object.entries(message.headers ?? {}).reduce((sum, [k, h]) => sum + Buffer.byteLength(k) + (h ? Buffer.byteLength(String(h)) : 0), 0);
        seen.push({ eventId: v.eventId, bytes: (message.key?.length ?? 0) + message.value!.length + headers });
      },
    });
  }, 90000);

  afterAll(async () => {
    await consumer?.disconnect();
    await ingest?.close();
  });

  const post = async (path: string, body: unknown) => {
    const { base, tenancy, dsToken } = ingest;
    const url = `${base}/v1/project/${tenancy.project.uid}/datasource/${tenancy.dataSource.id}/stream${path}`;
    const res = await fetch(url, { method: 'POST', headers: { ...dsToken('POST', url), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
  /**
   * A `_user_data` of exactly `size` bytes as JSON: `values` custom attributes of 2,000 characters
   * (they land on the contact), then names cleared with null (nothing to clear: the contact does
   * not grow, but the message carries them all), then `pad`, a string making up the size.
   */
  const userData = (size: number, values = 0) => {
    const data: Record<string, unknown> = Object.fromEntries(Array.from({ length: values }, (_, i) => [`v${i}`, `v${i}:`.padEnd(2000, 'x')]));
    let total = bytes(data);
    for (let i = 0; total < size - 1000; i++) {
      const name = `n${i}`.padEnd(64, 'n');
      data[name] = null;
      total += name.length + 7 + (total > 2 ? 1 : 0); // "name":null and its comma
    }
    data.pad = 'x'.repeat(size - total - '"pad":""'.length - (total > 2 ? 1 : 0));
    return data;
  };
  const event = (userId: string, eventId: string, data: Record<string, unknown>) => ({ _user_id: userId, _event_id: eventId, _event_type: 'purchase', _event_parameters: { 'product-id': 'p' }, _user_data: data });
  const contact = async (userId: string) => (await ingest.db.query(`SELECT version::int AS version FROM source_contacts WHERE project_id = $1 AND user_id = $2`, [ingest.tenancy.project.id, userId]))[0] ?? null;
  const marked = async (eventId: string) => Number((await ingest.db.query(`SELECT count(*) AS n FROM event_ids WHERE project_id = $1 AND event_id = $2`, [ingest.tenancy.project.id, eventId]))[0].n);
  const tooLarge = expect.stringMatching(new RegExp(`^must be at most ${CAP} bytes \\(256 KiB\\) as JSON`));

  it('refuses, as an item error on _user_data, an event whose message Kafka would refuse; nothing of it is written and its id stays free', async () => {
    // The largest body ingest takes (1 MiB): before the cap, its message was over Kafka's limit, a 500.
    const eventId = `huge-${randomUUID()}`;
    const huge = userData(1024 * 1024 - 200);
    expect(bytes([event('huge', eventId, huge)])).toBeLessThanOrEqual(1024 * 1024);
    const res = await post('/events', [event('huge', eventId, huge)]);
    expect([res.status, res.body.entity?.items]).toEqual([422, [{ status: 'error', _user_id: 'huge', errors: { _user_data: [tooLarge] } }]]);
    expect(await contact('huge')).toBeNull();
    expect(await marked(eventId)).toBe(0);
    // Fixed, the same id is accepted and produced.
    expect((await post('/events', [event('huge', eventId, { first: 'Huge' })])).status).toBe(202);
    await waitFor('the fixed event produced', async () => seen.some((s) => s.eventId === eventId));
  }, 60000);

  it('accepts an event just under the cap and produces it well within a produce request; refuses one just over; a batch of both is a partial 202', async () => {
    const under = `under-${randomUUID()}`;
    const over = `over-${randomUUID()}`;
    const beside = `beside-${randomUUID()}`;
    // Just under: ~200 KB of values on the contact, the rest cleared names, with the longest ids and parameters.
    const userId = 'u'.repeat(180);
    const longId = `${under}-`.padEnd(256, 'e');
    const underData = userData(CAP, 100);
    expect(bytes(underData)).toBe(CAP);
    const underEvent = { ...event(userId, longId, underData), _event_parameters: { 'product-id': 'p', blob: 'b'.repeat(MAX_PARAMETERS_BYTES - 100) } };
    const overData = userData(CAP + 1);
    expect(bytes(overData)).toBe(CAP + 1);
    const res = await post('/events', [underEvent, event('over', over, overData), event('beside', beside, { first: 'Beside' })]);
    expect(res.status).toBe(202);
    expect(res.body.entity).toEqual({
      successful: 2,
      failed: 1,
      items: [
        { status: 'success', _user_id: userId },
        { status: 'error', _user_id: 'over', errors: { _user_data: [expect.stringMatching(new RegExp(`\\(is ${CAP + 1}\\)`))] } },
        { status: 'success', _user_id: 'beside' },
      ],
    });
    expect(res.body.entity.items[1].errors._user_data[0]).toEqual(tooLarge);
    await waitFor('the accepted events produced', async () => seen.some((s) => s.eventId === longId) && seen.some((s) => s.eventId === beside));
    // The largest event ingest accepts: its record well under a produce request (libs/kafka), a third of it.
    const largest = seen.find((s) => s.eventId === longId)!.bytes;
    expect(largest).toBeGreaterThan(CAP);
    expect(largest).toBeLessThan(PRODUCE_REQUEST_MAX / 3);
    expect(await contact(userId)).not.toBeNull();
    // Nothing of the refused one: no contact, no id marked, no message.
    expect(await contact('over')).toBeNull();
    expect(await marked(over)).toBe(0);
    expect(seen.some((s) => s.eventId === over)).toBe(false);
  }, 60000);
});

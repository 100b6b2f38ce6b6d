import { randomUUID } from 'node:crypto';
import { type ClickHouse, sql } from '@meld/clickhouse';
import type { EventAccepted, EventsErased } from '@meld/contracts';
import { migratedTestClickHouse, waitFor } from '@meld/testing';
import { eventsSink } from '../src/sinks/events.sink';

/**
 * The events sink's erase markers in bulk (a source deleting thousands of contacts at once): the
 * sink runner hands one write up to 10,000 of them, and each must reach ClickHouse's mutation
 * whatever the size of one query (max_query_size, 256 KiB).
 */
describe('events sink: erase markers in bulk', () => {
  let ch: ClickHouse;
  const projectId = randomUUID();
  const dataSourceId = randomUUID();

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
  });

  afterAll(async () => {
    await ch?.close();
  });

  const event = (userId: string): EventAccepted => ({
    schemaVersion: 1,
    projectId,
    dataSourceId,
    userId,
    eventId: `ev-${randomUUID()}`,
    eventType: 'purchase',
    eventDate: '2026-11-20T10:00:00.000Z',
    receivedAt: '2026-11-20T10:00:01.000Z',
    parameters: {},
  });
  const erase = (userId: string): EventsErased => ({ schemaVersion: 1, kind: 'erase', projectId, dataSourceId, userId, version: 2, at: '2026-11-20T10:00:02.000Z' });

  it('erases the events of 3,000 contacts deleted in one write (user ids as long as ingest takes them)', async () => {
    const users = Array.from({ length: 3_000 }, (_, i) => `${'ü'.repeat(150)}-${i}@example.com`);
    const sink = eventsSink(ch);
    await sink.write(users.slice(0, 10).map((u) => sink.toRow(event(u))!));
    const kept = event('u-kept');
    await sink.write([...users.map((u) => sink.toRow(erase(u))!), sink.toRow(kept)!]);
    const stored = async () => (await ch.query<{ user_id: string }>(sql`SELECT DISTINCT user_id FROM events WHERE project_id = ${projectId}`)).map((r) => r.user_id);
    // The mutations run in the background.
    await waitFor('the deleted contacts’ events erased', async () => JSON.stringify(await stored()) === JSON.stringify(['u-kept']), { timeoutMs: 30000 });
  }, 60000);
});

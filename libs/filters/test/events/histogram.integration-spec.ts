import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { migratedTestClickHouse } from '@meld/testing';
import { bucketStarts, eventHistogramOf, type HistogramInterval } from '../../src/events';

const at = (iso: string) => Date.parse(iso) / 1000;

/**
 * The event histogram's buckets on ClickHouse (ADR 0335): local starts in a zone, through DST
 * changes and half-hour offsets, every bucket between the first event and the last. Expected
 * starts are written out by hand from the zones' offsets (Paris +01:00 in winter, +02:00 from
 * 2025-03-30 01:00 UTC to 2025-10-26 01:00 UTC; Kolkata +05:30 all year).
 */
describe('event histogram buckets', () => {
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = await migratedTestClickHouse();
  }, 60000);
  afterAll(() => ch?.close());

  const starts = async (interval: HistogramInterval, zone: string, first: string, last: string) =>
    (await ch.query<{ b: number }>(bucketStarts(interval, zone, at(first), at(last)))).map((r) => new Date(Number(r.b) * 1000).toISOString());

  it('finds every local day across a DST change, the last one even when its event is minutes into it', async () => {
    expect(await starts('day', 'Europe/Paris', '2025-03-29T22:30:00Z', '2025-03-30T22:05:00Z')).toEqual([
      '2025-03-28T23:00:00.000Z', // 29 March, +01:00
      '2025-03-29T23:00:00.000Z', // 30 March, 23 hours long
      '2025-03-30T22:00:00.000Z', // 31 March, +02:00
    ]);
    expect(await starts('day', 'Europe/Paris', '2025-10-25T12:00:00Z', '2025-10-27T12:00:00Z')).toEqual(['2025-10-24T22:00:00.000Z', '2025-10-25T22:00:00.000Z', '2025-10-26T23:00:00.000Z']);
  });

  it('starts hours on the half hour in Kolkata, weeks on local Mondays and months on local firsts', async () => {
    expect(await starts('hour', 'Asia/Kolkata', '2025-06-01T10:00:00Z', '2025-06-01T12:10:00Z')).toEqual(['2025-06-01T09:30:00.000Z', '2025-06-01T10:30:00.000Z', '2025-06-01T11:30:00.000Z']);
    expect(await starts('week', 'Europe/Paris', '2025-03-26T12:00:00Z', '2025-04-08T12:00:00Z')).toEqual(['2025-03-23T23:00:00.000Z', '2025-03-30T22:00:00.000Z', '2025-04-06T22:00:00.000Z']);
    expect(await starts('month', 'Asia/Kolkata', '2025-01-31T20:00:00Z', '2025-03-01T00:00:00Z')).toEqual(['2025-01-31T18:30:00.000Z', '2025-02-28T18:30:00.000Z']);
  });

  it('counts each event once in its local bucket', async () => {
    const projectId = randomUUID();
    const event = (id: string, date: string, copy = 0) => ({
      project_id: projectId, data_source_id: 'ds', user_id: 'u', event_id: id, event_type: 't', event_date: at(date), received_at: at(date) + copy, param_keys: [], param_values: [],
    });
    // 23:30 on 29 March, 23:30 on 30 March (after the change), 00:30 on 31 March, Paris time; the first delivered twice.
    const events = [event('a', '2025-03-29T22:30:00Z'), event('b', '2025-03-30T21:30:00Z'), event('c', '2025-03-30T22:30:00Z')];
    await ch.insert('events', events);
    await ch.insert('events', [event('a', '2025-03-29T22:30:00Z', 1)]);
    const scope = { projectId, range: { from: at('2025-03-01T00:00:00Z'), to: at('2025-05-01T00:00:00Z') } };
    const rows = await ch.query<{ b: number; n: string }>(eventHistogramOf(scope, 'day', 'Europe/Paris'));
    expect(rows.map((r) => [new Date(Number(r.b) * 1000).toISOString(), Number(r.n)])).toEqual([
      ['2025-03-28T23:00:00.000Z', 1],
      ['2025-03-29T23:00:00.000Z', 1],
      ['2025-03-30T22:00:00.000Z', 1],
    ]);
  });
});

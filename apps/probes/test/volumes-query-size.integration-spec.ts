import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { EventParameterEntity, EventTypeEntity } from '@meld/db';
import { seedTenancy, type Json } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ProbeReads } from '../src/shared/probe-reads';
import { eventRow, insertContacts, memberRow, probeHeaders, startProbes } from './probes.fixture';

/**
 * A root within every limit of the filter (its count's query 198 KB, under the 240 KiB bound of
 * ADR 0058) inside the volumes reads, which add a part per declared type and per listed parameter:
 * a read that would pass what ClickHouse parses (256 KiB) is refused with a 400 at `root` before
 * any read of events, not sent and answered with a 500.
 */
describe('event volumes: a root whose reads would pass max_query_size', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let t: Awaited<ReturnType<typeof seedTenancy>>;
  const contains = (i: number) => ({ type: 'attribute_condition', key: 'loyalty_tier', operator: 'contains-string', values: [`${'\\'.repeat(2040)}${i}`, 'x'] });
  const root = { type: 'group', operator: 'or', children: Array.from({ length: 24 }, (_, i) => contains(i)) };

  beforeAll(async () => {
    // Reads of a 198 KB root take about ten seconds here, the default max_execution_time of request reads (ADR 0114): this spec is about size, not time.
    ({ app, base, db, ch } = await startProbes({ MELD_CLICKHOUSE_MAX_EXECUTION_TIME: '120' }));
    t = await seedTenancy(db, 'volumes-query-size');
    const survey = await db.getRepository(EventTypeEntity).save({ projectId: t.project.id, uid: 'survey', name: 'Survey', category: 'crm' });
    // Date parameters are the longest to read (their values decoded from ISO text): 60 of them add about 81 KB.
    await db.getRepository(EventParameterEntity).insert(Array.from({ length: 60 }, (_, i) => ({ eventTypeId: survey.id, parameter: `answer-${i}`, title: `Answer ${i}`, dataType: 'date' })));
    const id = randomUUID();
    await insertContacts(ch, db, t.project.id, [[id, { str: { loyalty_tier: 'x' } }]]);
    await ch.insert('audience_membership', [memberRow(t.project.id, t.dataSource.id, 'u0', id)]);
    await ch.insert('events', [eventRow(t.project.id, t.dataSource.id, 'u0', 'survey', new Date(Date.now() - 86_400_000), { 'answer-0': '2026-01-02' })]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const volumes = async (body: unknown) => {
    const res = await fetch(`${base}/v1/project/${t.project.uid}/event/volumes`, { method: 'POST', headers: probeHeaders(t, { surface: 'event/volumes' }), body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };

  it('answers the root without `event`, and with a type of many parameters without the root', async () => {
    expect((await volumes({ root })).status).toBe(200);
    const plain = await volumes({ event: 'survey' });
    expect(plain.status).toBe(200);
    expect(plain.body.metadata.event.parameters.find((p: Json) => p.uid === 'answer-0').values.map((v: Json) => v.count)).toEqual([1]);
  });

  it('refuses the root with the parameter values of 60 date parameters: 400 at root, before any read of events (ADR 0058)', async () => {
    const reads = jest.spyOn(app.get(ProbeReads), 'rows');
    const res = await volumes({ root, event: 'survey' });
    const eventReads = reads.mock.calls.filter(([query]) => String(query).includes('FROM events') || String(query).includes('events PREWHERE'));
    reads.mockRestore();
    expect([res.status, res.body.details]).toEqual([400, { path: 'root' }]);
    expect(res.body.message).toContain('too large');
    expect(eventReads).toHaveLength(0);
  });

  it('refuses the root with the per-type windows of 400 declared types: 400 at root (ADR 0058)', async () => {
    // Types kept 7 days: each adds its uid to the read and a condition on its own window.
    await db.getRepository(EventTypeEntity).insert(Array.from({ length: 400 }, (_, i) => ({ projectId: t.project.id, uid: `kept_a_week_${String(i).padStart(3, '0')}_${'x'.repeat(40)}`, name: `Type ${i}`, category: 'crm' as const, retentionDays: 7 })));
    const res = await volumes({ root });
    expect([res.status, res.body.details]).toEqual([400, { path: 'root' }]);
    expect(res.body.message).toContain('too large');
  });
});

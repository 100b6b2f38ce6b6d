import { SYSTEM_EVENT_TYPES } from '@meld/contracts';
import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { DataSourceEntity, EventParameterEntity, EventTypeEntity } from '@meld/db';
import { seedTenancy, type Json } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { TOP_VALUES_OMITTED } from '../src/coverage/top-values-policy';
import { ProbeClock } from '../src/shared/probe-clock';
import { ProbeReads } from '../src/shared/probe-reads';
import { LAST_SEEN_WITHHELD } from '../src/volumes/last-seen';
import { VolumesSchema } from '../src/volumes/volumes.schema';
import { eventRow, insertContacts, memberRow, probeHeaders, startProbes } from './probes.fixture';

const DAY = 86_400_000;

/** POST /event/volumes on a small project (nothing sampled): window rules, retention (rule 12), id and name (rule 13), data source, root, cache. */
describe('event volumes', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let clock: ProbeClock;
  let t: Awaited<ReturnType<typeof seedTenancy>>;
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  const now = Date.now();
  const ago = (days: number) => new Date(now - days * DAY);

  beforeAll(async () => {
    ({ app, base, db, ch } = await startProbes());
    clock = app.get(ProbeClock);
    t = await seedTenancy(db, 'volumes');
    const purchase = await db.getRepository(EventTypeEntity).findOneByOrFail({ projectId: t.project.id, uid: 'purchase' });
    await db.getRepository(EventParameterEntity).insert([
      { eventTypeId: purchase.id, parameter: 'product-name', title: 'Product name', dataType: 'string' },
      { eventTypeId: purchase.id, parameter: 'order-id', title: 'Order id', dataType: 'string' },
      { eventTypeId: purchase.id, parameter: 'tags', title: 'Tags', dataType: 'string', multiValue: 5 },
    ]);
    await db.getRepository(EventTypeEntity).insert([
      { projectId: t.project.id, uid: 'page_view', name: 'Page view', category: 'contact_behaviour', retentionDays: 7 },
      { projectId: t.project.id, uid: 'signup', name: 'Signup', category: 'crm' },
    ]);
    const other = await db.getRepository(DataSourceEntity).save({ projectId: t.project.id, uid: `shop-${randomUUID().slice(0, 8)}`, name: 'Shop', connector: 'shopify' });
    await insertContacts(ch, db, t.project.id, [
      [ids[0], { str: { loyalty_tier: 'gold' } }],
      [ids[1], { str: { loyalty_tier: 'silver' } }],
      [ids[2], { str: { loyalty_tier: 'silver' } }],
    ]);
    const ds = t.dataSource.id;
    await ch.insert('audience_membership', [memberRow(t.project.id, ds, 'u0', ids[0]), memberRow(t.project.id, ds, 'u1', ids[1]), memberRow(t.project.id, other.id, 's2', ids[2])]);
    const p = t.project.id;
    const red = { 'product-id': 'P1', 'product-name': 'Red shoes', amount: 30, 'order-id': 'o1', tags: ['sale', 'new'] };
    await ch.insert('events', [
      eventRow(p, ds, 'u0', 'purchase', ago(1), red, 'e1'),
      // The same event delivered twice counts once.
      eventRow(p, ds, 'u0', 'purchase', ago(1), red, 'e1'),
      eventRow(p, ds, 'u1', 'purchase', ago(1.5), { ...red, 'order-id': 'o2', tags: ['sale'] }, 'e2'),
      eventRow(p, other.id, 's2', 'purchase', ago(3.5), { 'product-id': 'P2', 'product-name': 'Blue hat', amount: 12, 'order-id': 'o3' }, 'e3'),
      // Outside the default 90-day window.
      eventRow(p, ds, 'u0', 'purchase', ago(100), red, 'e4'),
      eventRow(p, ds, 'u0', 'page_view', ago(3), {}, 'pv1'),
      // Inside the window, beyond page_view's 7-day retention.
      eventRow(p, ds, 'u1', 'page_view', ago(10), {}, 'pv2'),
    ]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const volumes = async (body: unknown, opts: Parameters<typeof probeHeaders>[1] = {}) => {
    const res = await fetch(`${base}/v1/project/${t.project.uid}/event/volumes`, { method: 'POST', headers: probeHeaders(t, { surface: 'event/volumes', ...opts }), body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const type = (body: Json, uid: string) => body.metadata.eventTypes.find((e: Json) => e.uid === uid);
  const blocked: Parameters<typeof probeHeaders>[1] = { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_FULL'], dataMode: 'blocked' };
  const gold = { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['gold'] };

  it('lists every declared type with its exact count in its window; nothing received reads as 0, false, null (rule 12)', async () => {
    const population = jest.spyOn(app.get(ProbeReads), 'row');
    const { status, body } = await volumes({});
    expect(status).toBe(200);
    // The project audience is a plain scan of the collapsing snapshot, not a FINAL merge (ADR 0223).
    const reads = population.mock.calls.map(([query]) => String(query));
    population.mockRestore();
    expect(reads).toHaveLength(1);
    expect(reads[0]).toContain('FROM audience_snapshot');
    expect(reads[0]).not.toContain('FINAL');
    VolumesSchema.parse(body);
    const m = body.metadata;
    expect(m.window).toMatchObject({ days: 90, requestedDays: 90, band: 'under 10,000 contacts: 90 days', clamped: false, clampedBy: null, planLookBackDays: 90 });
    expect(m.sampling).toMatchObject({ applied: false, parameterValues: 'not requested: pass `event`' });
    expect(m.eventTypes.map((e: Json) => e.uid)).toEqual(['page_view', 'purchase', 'signup']);
    expect(type(body, 'purchase')).toEqual({ uid: 'purchase', label: 'Purchase', count: 3, received: true, lastSeenAt: new Date(Math.floor(ago(1).getTime() / 1000) * 1000).toISOString(), effectiveWindowDays: 90, windowLimitedByRetention: false, retentionDays: null });
    expect(type(body, 'page_view')).toMatchObject({ count: 1, received: true, effectiveWindowDays: 7, windowLimitedByRetention: true, retentionDays: 7 });
    expect(type(body, 'signup')).toMatchObject({ count: 0, received: false, lastSeenAt: null, effectiveWindowDays: 90, windowLimitedByRetention: false });
    expect(m).toMatchObject({ cached: false, computedAgo: 0 });
    expect(m.summary).toBe('2 of 3 declared event types received events in the last 90 days; counts are exact.');
  });

  it('returns an id parameter with its name parameter, each id with its name (rule 13), exact under 10,000 contacts', async () => {
    const reads = jest.spyOn(app.get(ProbeReads), 'rows');
    const { status, body } = await volumes({ event: 'purchase' });
    expect(status).toBe(200);
    expect(body.metadata.cached).toBe(false);
    // Values, totals and names come from one read of the sampled events (ADR 0222).
    const eventReads = reads.mock.calls.filter(([query]) => String(query).includes('param_values') && String(query).includes('ANY INNER JOIN'));
    reads.mockRestore();
    expect(eventReads).toHaveLength(1);
    VolumesSchema.parse(body);
    const e = body.metadata.event;
    expect(e).toMatchObject({ uid: 'purchase', count: 3, sampling: { applied: false, fraction: 1, buckets: 100, scaled: false, minReliableCount: 30, unit: 'contacts', scanned: 3, population: 3 } });
    const param = (uid: string) => e.parameters.find((p: Json) => p.uid === uid);
    expect(param('product-id')).toEqual({
      uid: 'product-id',
      title: 'Product id',
      dataType: 'string',
      nameParameter: 'product-name',
      values: [
        { value: 'P1', name: 'Red shoes', count: 2, observedCount: 2, observedContacts: 2, approximate: false, reliable: true, countError: 0 },
        { value: 'P2', name: 'Blue hat', count: 1, observedCount: 1, observedContacts: 1, approximate: false, reliable: true, countError: 0 },
      ],
      other: 0,
      truncated: false,
    });
    expect(param('product-name')).toMatchObject({ idParameter: 'product-id', values: [{ value: 'Red shoes', count: 2 }, { value: 'Blue hat', count: 1 }] });
    expect(param('amount')).toMatchObject({ valuesOmitted: 'the name reads as a quantity' });
    expect(param('amount').values).toBeUndefined();
    expect(param('order-id').valuesOmitted).toMatch(/identifier, and no name parameter pairs with it/);
    // A multivalue parameter counts an event once under each of its values.
    expect(param('tags').values.map((v: Json) => [v.value, v.count])).toEqual([['sale', 2], ['new', 1]]);
  });

  it('keeps the events a data source produced (rule 6) and those of the contacts a root matches', async () => {
    const bySource = (await volumes({ datasource: 'shopify', event: 'purchase' })).body.metadata;
    expect(type({ metadata: bySource }, 'purchase').count).toBe(1);
    expect(bySource.datasource.meaning).toMatch(/events "Shop" produced/);
    expect(bySource.event.parameters.find((p: Json) => p.uid === 'product-id').values.map((v: Json) => v.value)).toEqual(['P2']);

    const root = { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['gold'] };
    const { body } = await volumes({ root, event: 'purchase' });
    VolumesSchema.parse(body);
    expect(type(body, 'purchase').count).toBe(1);
    expect(type(body, 'page_view').count).toBe(1);
    expect(body.metadata.event.sampling).toMatchObject({ population: 1, scanned: 1 });
    expect(body.metadata.cached).toBe(false);
  });

  it('lists no parameter value in a blocked project, even narrowed to one contact; counts stay (ADR 0164)', async () => {
    for (const [root, count] of [[undefined, 3], [gold, 1]] as const) {
      const { status, body } = await volumes({ root, event: 'purchase' }, blocked);
      expect(status).toBe(200);
      VolumesSchema.parse(body);
      const e = body.metadata.event;
      expect(e).toMatchObject({ uid: 'purchase', count, parametersOmitted: expect.stringMatching(/valuesOmitted/) });
      expect(type(body, 'purchase').count).toBe(count);
      expect(e.parameters.map((p: Json) => p.uid).sort()).toEqual(['amount', 'order-id', 'product-id', 'product-name', 'tags']);
      for (const p of e.parameters) {
        expect(p.valuesOmitted).toBe(TOP_VALUES_OMITTED.dataMode);
        expect(p.values).toBeUndefined();
      }
      expect(JSON.stringify(body)).not.toMatch(/Red shoes|Blue hat|"P1"|"P2"|"sale"|"o1"/);
    }
  });

  it('reports no lastSeenAt in a blocked project, even narrowed to one contact: null with lastSeenAtOmitted, never a bare null (ADR 0164, rule 12)', async () => {
    const withheld = { lastSeenAt: null, lastSeenAtOmitted: LAST_SEEN_WITHHELD };
    for (const [root, count] of [[undefined, 3], [gold, 1]] as const) {
      const { status, body } = await volumes({ root, event: 'purchase' }, blocked);
      expect(status).toBe(200);
      VolumesSchema.parse(body);
      // The gold contact's last purchase was a day ago: that time must not come back in any form.
      expect(type(body, 'purchase')).toMatchObject({ count, received: true, ...withheld });
      expect(type(body, 'page_view')).toMatchObject({ count: 1, received: true, ...withheld });
      expect(type(body, 'signup')).toMatchObject({ count: 0, received: false, ...withheld });
      expect(body.metadata.event).toMatchObject({ uid: 'purchase', count, ...withheld });
      expect(JSON.stringify(body)).not.toMatch(/"lastSeenAt":"/);
    }
    // Anonymized mode masks identifiers, not times (a contact's events read there carry their dates): the time stays.
    const { body } = await volumes({ root: gold, event: 'purchase' }, { scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_FULL'], dataMode: 'anonymized' });
    const lastPurchase = new Date(Math.floor(ago(1).getTime() / 1000) * 1000).toISOString();
    expect(type(body, 'purchase')).toEqual(expect.objectContaining({ lastSeenAt: lastPurchase }));
    expect(type(body, 'purchase').lastSeenAtOmitted).toBeUndefined();
    expect(body.metadata.event).toMatchObject({ lastSeenAt: lastPurchase });
  });

  it('refuses bad input naming the field', async () => {
    for (const [body, field] of [
      [{ window: 0 }, 'window'],
      [{ window: 2.5 }, 'window'],
      [{ event: 'nope' }, 'event'],
      [{ datasource: 'nope' }, 'datasource'],
      [{ colour: 'red' }, ''],
    ] as const) {
      const res = await volumes(body);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(field);
    }
    expect((await volumes({ event: 'nope' })).body.details.eventTypes).toEqual(['page_view', 'purchase', 'signup', ...SYSTEM_EVENT_TYPES.map((e) => e.uid)]);
  });

  it("probes one of Meld's own event types with `event` (ADR 0336), listing only the declared ones", async () => {
    const ds = t.dataSource.id;
    const sms = (id: string, days: number, senderId: string) => eventRow(t.project.id, ds, 'u0', '_sms_delivered', ago(days), { smsId: id, senderId, messagesCount: 1 }, `_sms_delivered:${id}`);
    await ch.insert('events', [sms('m1', 2, 'brand'), sms('m2', 2.5, 'brand'), sms('m3', 200, 'brand')]);
    const { status, body } = await volumes({ event: '_sms_delivered' });
    expect(status).toBe(200);
    VolumesSchema.parse(body);
    expect(body.metadata.eventTypes.map((e: Json) => e.uid)).toEqual(['page_view', 'purchase', 'signup']);
    expect(body.metadata.event).toMatchObject({ uid: '_sms_delivered', count: 2, lastSeenAt: new Date(Math.floor(ago(2).getTime() / 1000) * 1000).toISOString() });
    expect(body.metadata.event.parameters.map((p: Json) => p.uid)).toEqual(['smsId', 'senderId', 'messagesCount', 'error']);
    // Ids and counts by name (probe rule 7): measured, their values withheld.
    expect(body.metadata.event.parameters.find((p: Json) => p.uid === 'senderId')).toMatchObject({ valuesOmitted: expect.any(String) });
  });

  it('clamps the window by the plan look-back and moves with the clock', async () => {
    const s = (await volumes({}, { plan: 's' })).body.metadata;
    expect(s.window).toMatchObject({ days: 30, requestedDays: 90, clamped: true, clampedBy: 'plan', planLookBackDays: 30 });
    expect(s.summary).toMatch(/asked 90, clamped by the plan's 30-day look-back/);
    expect((await volumes({ window: 400 }, { plan: 'l' })).body.metadata.window).toMatchObject({ days: 180, requestedDays: 400, band: 'requested', clamped: true });
    expect((await volumes({ window: 5 })).body.metadata.window).toMatchObject({ days: 5, clamped: false, band: 'requested' });
    // However long the window asked, it is clamped and reported, never refused (the spec's limits).
    expect((await volumes({ window: 100_000 }, { plan: 'xl' })).body.metadata.window).toMatchObject({ days: 365, requestedDays: 100_000, clamped: true, clampedBy: 'plan' });

    // A root is computed live: two and a half days on, the purchases of one and two days ago have left a 3-day window.
    const root = { type: 'group', children: [] };
    const before = (await volumes({ root, window: 3 })).body.metadata;
    expect(type({ metadata: before }, 'purchase').count).toBe(2);
    clock.advance(2.5 * DAY);
    try {
      const after = (await volumes({ root, window: 3 })).body.metadata;
      expect(Date.parse(after.window.to) - Date.parse(before.window.to)).toBeGreaterThanOrEqual(2.5 * DAY);
      expect(type({ metadata: after }, 'purchase')).toMatchObject({ count: 0, received: false, lastSeenAt: null });
    } finally {
      clock.advance(-2.5 * DAY);
    }
  });

  it('caches unfiltered answers per project, surface and arguments, and throttles refresh (rules 2, 3)', async () => {
    const body = { window: 60 };
    expect((await volumes(body)).body.metadata).toMatchObject({ cached: false });
    await ch.insert('events', [eventRow(t.project.id, t.dataSource.id, 'u1', 'signup', ago(1))]);
    const cached = (await volumes(body)).body.metadata;
    expect(cached).toMatchObject({ cached: true });
    expect(type({ metadata: cached }, 'signup').count).toBe(0);
    // A plan with another look-back is another answer.
    expect((await volumes(body, { plan: 's' })).body.metadata).toMatchObject({ cached: false });
    const refreshed = (await volumes({ ...body, refresh: true })).body.metadata;
    expect(refreshed).toMatchObject({ cached: false });
    expect(type({ metadata: refreshed }, 'signup').count).toBe(1);
    expect((await volumes({ ...body, refresh: true })).body.metadata).toMatchObject({ cached: true, refreshDeclined: true });
  });
});

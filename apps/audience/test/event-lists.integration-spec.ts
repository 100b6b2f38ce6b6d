import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { type DataMode, type Plan, type Scope } from '@meld/contracts';
import { AudienceSnapshotFixture, contactRow, seedTenancy, signedPrincipal, startAppUnderTest, type Json } from '@meld/fixtures';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { EventScrollSchema, EventSearchSchema } from '../src/event-lists/event-lists.schema';

const SCOPES: Scope[] = ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS', 'PROJECT_AUDIENCE_LIST'];
const DAY = 86_400;

/**
 * POST /event/scroll and /event/search on the audience app (ADR 0332), over events and
 * memberships written to ClickHouse as the probes sinks write them.
 */
describe('event lists: scroll and search', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  let crm: { id: string; uid: string };
  const now = Math.floor(Date.now() / 1000);
  const audienceOf = randomUUID();
  /** The audience contact of the CRM's source contact: silver, where `audienceOf` is gold. */
  const silverOf = randomUUID();
  /** Every event id written, oldest first (dates are distinct). */
  const written: Array<{ id: string; ageDays: number; type: string; source: 'web' | 'crm' }> = [];

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAppUnderTest(appDefinition));
    tenancy = await seedTenancy(db, 'eventlists');
    [crm] = await db.query(`INSERT INTO data_sources (project_id, uid, name, connector) VALUES ($1, 'crm', 'CRM', 'crm') RETURNING id, uid`, [tenancy.project.id]);
    // 40 events over 80 days (2 days apart, odd ages: none on a whole-day boundary the tests use), every third on the CRM, the rest on the tenancy's source; one older than the m plan's 90 days.
    for (let i = 0; i < 40; i++) written.push({ id: `ev-${String(i).padStart(2, '0')}-${randomUUID().slice(0, 4)}`, ageDays: 81 - i * 2, type: i % 4 === 0 ? 'signup' : 'purchase', source: i % 3 === 0 ? 'crm' : 'web' });
    const row = (e: (typeof written)[number], copy = 0) => ({
      project_id: tenancy.project.id,
      data_source_id: e.source === 'crm' ? crm.id : tenancy.dataSource.id,
      user_id: e.source === 'crm' ? 'grace@example.com' : 'web-user', // a source whose user ids are emails
      event_id: e.id,
      event_type: e.type,
      event_date: now - e.ageDays * DAY,
      received_at: now - e.ageDays * DAY + 1 + copy,
      param_keys: ['contact', 'amount'],
      param_values: [JSON.stringify('ada@example.com'), JSON.stringify(e.ageDays)],
    });
    // Resent after an ingest crash that lost the id marks (Kafka acked, the COMMIT never came): both
    // copies sent without `_event_date`, so each is dated at its own reception (event_date =
    // received_at), the resend 2 hours or a day later; listed once, at the first copy's date.
    const received = (e: (typeof written)[number], later: number) => ({ ...row(e), event_date: now - e.ageDays * DAY + later, received_at: now - e.ageDays * DAY + later });
    const resent = new Map([[written[20], 2 * 3600], [written[28], DAY], [written[29], DAY], [written[39], DAY]]);
    await ch.insert('events', written.map((e) => (resent.has(e) ? received(e, 0) : row(e))));
    // Redelivered copies in another part, and an event beyond the look-back.
    await ch.insert('events', [...written.slice(0, 10).map((e) => row(e, 1)), row({ id: 'too-old', ageDays: 200, type: 'purchase', source: 'web' })]);
    await ch.insert('events', [...resent].map(([e, later]) => received(e, later)));
    await ch.insert('audience_membership', [
      { project_id: tenancy.project.id, data_source_id: tenancy.dataSource.id, user_id: 'web-user', audience_id: audienceOf, version: '1', deleted: 0 },
      { project_id: tenancy.project.id, data_source_id: crm.id, user_id: 'grace@example.com', audience_id: silverOf, version: '1', deleted: 0 },
    ]);
    await new AudienceSnapshotFixture(ch, db).write([contactRow(tenancy.project.id, audienceOf, { str: { loyalty_tier: 'gold' } }), contactRow(tenancy.project.id, silverOf, { str: { loyalty_tier: 'silver' } })]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const call = async (path: 'scroll' | 'search', body: unknown, { scopes = SCOPES, dataMode = 'normal' as DataMode, plan = 'm' as Plan } = {}): Promise<{ status: number; body: Json }> => {
    const url = `${base}/v1/project/${tenancy.project.uid}/event/${path}`;
    const principal = signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenancy.organization.id, plan, scopes, project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode }, dataSourceId: null },
      { app: 'audience', method: 'POST', url },
    );
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...principal }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const idsOf = (body: Json): string[] => body.entity.map((e: { id: string }) => e.id);

  async function scrollAll(body: Record<string, unknown>) {
    const seen: string[] = [];
    let scrollId: string | undefined;
    for (let pages = 0; pages < 60; pages++) {
      const res = await call('scroll', { ...body, ...(scrollId ? { scrollId } : {}) });
      expect(res.status).toBe(200);
      EventScrollSchema.parse(res.body);
      seen.push(...idsOf(res.body));
      scrollId = res.body.metadata.scrollId ?? undefined;
      if (!scrollId) return { seen, pages: pages + 1 };
    }
    throw new Error('the scroll did not end');
  }

  it('scrolls every event within the look-back once, oldest first, copies merged, in pages of any size', async () => {
    for (const size of [1, 7, 1000]) {
      const { seen, pages } = await scrollAll({ size });
      expect([size, seen]).toEqual([size, written.map((e) => e.id)]);
      expect(pages).toBe(Math.max(1, Math.ceil(written.length / size)));
    }
  });

  it('filters by event type, data source (uid or id) and dates; an unknown source lists the known ones', async () => {
    expect((await scrollAll({ size: 5, eventType: 'signup' })).seen).toEqual(written.filter((e) => e.type === 'signup').map((e) => e.id));
    const fromCrm = written.filter((e) => e.source === 'crm').map((e) => e.id);
    expect((await scrollAll({ size: 4, datasource: 'crm' })).seen).toEqual(fromCrm);
    expect((await scrollAll({ size: 4, datasource: crm.id })).seen).toEqual(fromCrm);
    // An id in capitals is the same id (RFC 9562: case-insensitive on input).
    expect((await scrollAll({ size: 4, datasource: crm.id.toUpperCase() })).seen).toEqual(fromCrm);
    const dateFrom = new Date((now - 30 * DAY) * 1000).toISOString();
    const dateTo = new Date((now - 10 * DAY) * 1000).toISOString();
    expect((await scrollAll({ size: 3, dateFrom, dateTo })).seen).toEqual(written.filter((e) => e.ageDays <= 30 && e.ageDays > 10).map((e) => e.id));
    const unknown = await call('search', { datasource: 'nope' });
    expect([unknown.status, unknown.body.details.fields[0].path, unknown.body.details.known]).toEqual([400, 'datasource', expect.arrayContaining(['crm'])]);
    const reversed = await call('search', { dateFrom: dateTo, dateTo: dateFrom });
    expect([reversed.status, reversed.body.details.fields[0].path]).toEqual([400, 'dateTo']);
    // Past what a ClickHouse DateTime holds (2106): every event of the look-back, not a wrapped-around empty page.
    expect((await scrollAll({ size: 100, dateTo: '2110-01-01T00:00:00Z' })).seen).toEqual((await scrollAll({ size: 100 })).seen);
  });

  it('shows each event with its source and audience contact, parameters masked as the data mode and level say; blocked is 403', async () => {
    const page = await call('search', { size: 100, datasource: tenancy.dataSource.id });
    const event = page.body.entity[0];
    expect(event).toMatchObject({ dataSourceId: tenancy.dataSource.id, userId: 'web-user', audienceId: audienceOf, parameters: { amount: expect.any(Number) } });
    expect(event.parameters.contact).not.toBe('ada@example.com');
    const basic = await call('search', { size: 1 }, { scopes: [...SCOPES, 'PROJECT_AUDIENCE_DATA_BASIC'] });
    expect(basic.body.entity[0].parameters.contact).toBe('ada@example.com');
    const crmEvent = (await call('search', { size: 1, datasource: 'crm' })).body.entity[0];
    expect(crmEvent.audienceId).toBe(silverOf);
    // The user id is contact data too: masked where an email parameter is.
    expect(crmEvent.userId).toMatch(/^g\*+@/);
    expect((await call('search', { size: 1, datasource: 'crm' }, { scopes: [...SCOPES, 'PROJECT_AUDIENCE_DATA_BASIC'] })).body.entity[0].userId).toBe('grace@example.com');
    expect((await call('search', { size: 1, datasource: 'crm' }, { scopes: [...SCOPES, 'PROJECT_AUDIENCE_DATA_BASIC'], dataMode: 'anonymized' })).body.entity[0].userId).not.toContain('grace');
    expect((await call('scroll', {}, { dataMode: 'blocked' })).status).toBe(403);
    expect((await call('search', {}, { dataMode: 'blocked' })).status).toBe(403);
  });

  it('searches newest first at an offset, saying whether more follow; the plan bounds the history', async () => {
    const newest = [...written].reverse().map((e) => e.id);
    const page = await call('search', { from: 5, size: 10 });
    EventSearchSchema.parse(page.body);
    expect(idsOf(page.body)).toEqual(newest.slice(5, 15));
    expect(page.body.metadata).toMatchObject({ from: 5, size: 10, count: 10, more: true, lookBackDays: 90 });
    expect((await call('search', { from: 35, size: 10 })).body.metadata).toMatchObject({ count: 5, more: false });
    const small = await call('search', { size: 100 }, { plan: 's' });
    expect(idsOf(small.body)).toEqual(written.filter((e) => e.ageDays < 30).reverse().map((e) => e.id));
    const far = await call('search', { from: 9_990, size: 20 });
    expect([far.status, far.body.details.fields[0].path]).toEqual([400, 'from']);
  });

  it('keeps the events of the contacts an audience filter or a saved segment selects now (ADR 0332)', async () => {
    const tier = (value: string) => ({ type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: [value] });
    const of = (source: 'web' | 'crm') => written.filter((e) => e.source === source && e.ageDays < 90).map((e) => e.id);
    expect((await scrollAll({ root: tier('gold'), size: 3 })).seen).toEqual(of('web'));
    expect((await scrollAll({ root: tier('silver'), size: 1000 })).seen).toEqual(of('crm'));
    expect((await scrollAll({ root: tier('bronze') })).seen).toEqual([]);
    const newest = await call('search', { root: tier('silver'), eventType: 'purchase', size: 3 });
    EventSearchSchema.parse(newest.body);
    expect(idsOf(newest.body)).toEqual(written.filter((e) => e.source === 'crm' && e.type === 'purchase').reverse().slice(0, 3).map((e) => e.id));
    const [segment] = await db.query(`INSERT INTO segments (project_id, name, filter) VALUES ($1, 'Gold', $2) RETURNING id`, [tenancy.project.id, { version: '0.0.1', root: tier('gold') }]);
    expect((await scrollAll({ segment: segment.id, size: 7 })).seen).toEqual(of('web'));
    // A scroll id carries its selection: another root does not continue it.
    const first = await call('scroll', { root: tier('gold'), size: 2 });
    const other = await call('scroll', { root: tier('silver'), size: 2, scrollId: first.body.metadata.scrollId });
    expect([other.status, other.body.details.fields[0].path]).toEqual([400, 'scrollId']);
    // The filter's own rules: a node outside the grammar is a 400 naming it, an email condition needs mayReadPii, an unknown segment is a 404.
    const bad = await call('search', { root: { type: 'attribute_condition', key: 'nope', operator: 'matches-string', values: ['x'] } });
    expect([bad.status, bad.body.details.path]).toEqual([400, 'root.key']);
    const pii = await call('search', { root: { type: 'attribute_condition', key: '_email', operator: 'matches-string', values: ['ada@example.com'] } });
    expect(pii.status).toBe(403);
    expect((await call('search', { segment: randomUUID() })).status).toBe(404);
  });

  it('refuses a root whose events query would pass what ClickHouse parses: 400 at root, not a 500 (ADR 0058)', async () => {
    // Within AUDIENCE_FILTER_LIMITS, its count's query under 240 KiB (198 KB), but an events query names its contacts twice.
    const contains = (i: number) => ({ type: 'attribute_condition', key: 'loyalty_tier', operator: 'contains-string', values: [`${'\\'.repeat(2040)}${i}`, 'x'] });
    const root = { type: 'group', operator: 'or', children: Array.from({ length: 24 }, (_, i) => contains(i)) };
    for (const path of ['scroll', 'search'] as const) {
      const res = await call(path, { root });
      expect([path, res.status, res.body.details]).toEqual([path, 400, { path: 'root' }]);
      expect(res.body.message).toContain('too large');
    }
  });

  it('refuses a scroll id issued for another filter, or forged', async () => {
    const first = await call('scroll', { size: 2, eventType: 'purchase' });
    const other = await call('scroll', { size: 2, eventType: 'signup', scrollId: first.body.metadata.scrollId });
    expect([other.status, other.body.details.fields[0].path]).toEqual([400, 'scrollId']);
    const state = JSON.parse(Buffer.from(first.body.metadata.scrollId, 'base64url').toString());
    for (const forged of [{ ...state, d: -5 }, { ...state, s: 0 }, { ...state, d: 1e15 }]) {
      const res = await call('scroll', { size: 2, eventType: 'purchase', scrollId: Buffer.from(JSON.stringify(forged)).toString('base64url') });
      expect([res.status, res.body.details.fields[0].path]).toEqual([400, 'scrollId']);
    }
  });
});

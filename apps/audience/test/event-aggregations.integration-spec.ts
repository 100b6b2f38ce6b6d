import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import { type DataMode, type Plan, type Scope } from '@meld/contracts';
import { AttributeEntity } from '@meld/db';
import { AudienceSnapshotFixture, contactRow, seedTenancy, signedPrincipal, startAppUnderTest, type Json } from '@meld/fixtures';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { EventAggregationsSchema } from '../src/event-aggregations/event-aggregations.schema';

const SCOPES: Scope[] = ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS', 'PROJECT_AGGREGATIONS'];
const HOUR = 3600;
const DAY = 86_400;
/** Asia/Kolkata is UTC+05:30 all year: its local midnights are easy to compute independently. */
const KOLKATA = 19_800;

interface Written {
  id: string;
  at: number;
  type: 'purchase' | 'signup' | 'visit';
  source: 'web' | 'crm';
  parameters: Record<string, unknown>;
}

/**
 * POST /event/aggregations on the audience app (ADR 0335), over events written to ClickHouse as
 * the probes sink writes them (parameters JSON-encoded), redelivered copies included (also copies
 * dated apart): every expectation is computed from the events written, each counted once.
 */
describe('event aggregations', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let tenancy: Awaited<ReturnType<typeof seedTenancy>>;
  let crm: { id: string; uid: string };
  const now = Math.floor(Date.now() / 1000);
  const written: Written[] = [];
  const [gold, silver] = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAppUnderTest(appDefinition));
    tenancy = await seedTenancy(db, 'eventaggs');
    await db.query(`UPDATE projects SET timezone = 'Asia/Kolkata' WHERE id = $1`, [tenancy.project.id]);
    [crm] = await db.query(`INSERT INTO data_sources (project_id, uid, name, connector) VALUES ($1, 'crm', 'CRM', 'crm') RETURNING id, uid`, [tenancy.project.id]);
    // 60 events over the last ~20 days, 7 h 13 min apart (so some days have none at the ends of a day, and buckets fall unevenly).
    for (let i = 0; i < 60; i++) {
      const type = i % 5 === 0 ? 'signup' : i % 3 === 0 ? 'visit' : 'purchase';
      const parameters: Record<string, unknown> = { channel: i % 4 === 0 ? 'email' : i % 4 === 1 ? 'sms' : 'push', contact: `user${i % 2}@example.com` };
      if (type === 'purchase') parameters.amount = i % 7 === 0 ? String(i) : i * 1.5; // a quoted number is text: not counted by stats
      if (i === 7) Object.assign(parameters, { constructor: 'hostile' });
      written.push({ id: `ev-${i}-${randomUUID().slice(0, 6)}`, at: now - 20 * DAY + i * (7 * HOUR + 13 * 60), type, source: i % 3 === 0 ? 'crm' : 'web', parameters });
    }
    const row = (e: Written, copy = 0) => ({
      project_id: tenancy.project.id,
      data_source_id: e.source === 'crm' ? crm.id : tenancy.dataSource.id,
      user_id: `${e.source}-user`,
      event_id: e.id,
      event_type: e.type,
      event_date: e.at,
      received_at: e.at + 1 + copy,
      param_keys: Object.keys(e.parameters),
      param_values: Object.values(e.parameters).map((v) => JSON.stringify(v)),
    });
    await ch.insert('events', written.map((e) => row(e)));
    // Redelivered copies in another part, one event beyond the plan's look-back, one of another project.
    const old: Written = { id: 'too-old', at: now - 200 * DAY, type: 'purchase', source: 'web', parameters: { amount: 1e6 } };
    await ch.insert('events', [...written.slice(0, 25).map((e) => row(e, 1)), row(old), { ...row(written[0]), project_id: randomUUID(), event_id: 'elsewhere' }]);
    // Resent after an ingest crash that lost the id marks (Kafka acked, the COMMIT never came): sent
    // without `_event_date`, each resend is dated at its own reception, a day and 2 hours after the
    // first copy, so the two never merge (sorting keys differ). Counted once, at the first copy's date.
    const resent = (e: Written) => ({ ...row(e), event_date: e.at + DAY + 2 * HOUR, received_at: e.at + DAY + 2 * HOUR });
    await ch.insert('events', [...written.slice(30, 35), written.at(-1)!].map(resent));
    // The web user belongs to a gold contact, the CRM user to a silver one (an older membership of it in gold).
    await db.getRepository(AttributeEntity).insert({ projectId: tenancy.project.id, uid: 'tier', label: 'tier', type: 'string' });
    await new AudienceSnapshotFixture(ch, db).write([contactRow(tenancy.project.id, gold, { str: { tier: 'gold' } }), contactRow(tenancy.project.id, silver, { str: { tier: 'silver' } })]);
    const member = (ds: string, user: string, audienceId: string, version: number) => ({ project_id: tenancy.project.id, data_source_id: ds, user_id: user, audience_id: audienceId, version: String(version), deleted: 0 });
    await ch.insert('audience_membership', [member(tenancy.dataSource.id, 'web-user', gold, 1), member(crm.id, 'crm-user', gold, 1), member(crm.id, 'crm-user', silver, 2)]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const call = async (body: unknown, { scopes = SCOPES, dataMode = 'normal' as DataMode, plan = 'm' as Plan } = {}): Promise<{ status: number; body: Json }> => {
    const url = `${base}/v1/project/${tenancy.project.uid}/event/aggregations`;
    const principal = signedPrincipal(
      { kind: 'product', tokenId: randomUUID(), organizationId: tenancy.organization.id, plan, scopes, project: { id: tenancy.project.id, uid: tenancy.project.uid, dataMode }, dataSourceId: null },
      { app: 'audience', method: 'POST', url },
    );
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...principal }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const ok = async (body: unknown, options?: Parameters<typeof call>[1]) => {
    const res = await call(body, options);
    expect([res.status, res.body]).toEqual([200, expect.anything()]);
    EventAggregationsSchema.parse(res.body);
    return res.body.metadata as Json;
  };
  /** Values by count, most first, ties by value: as the endpoint orders them. */
  const tally = (values: readonly unknown[]) => {
    const counts = new Map<string, { value: unknown; count: number }>();
    for (const value of values) {
      const key = JSON.stringify(value);
      counts.set(key, { value, count: (counts.get(key)?.count ?? 0) + 1 });
    }
    return [...counts.entries()].sort(([ka, a], [kb, b]) => b.count - a.count || (ka < kb ? -1 : 1)).map(([, b]) => b);
  };

  it('counts each event once, by type and by source (shown by uid), within the filter and the look-back', async () => {
    const m = await ok({ aggregations: [{ type: 'terms', field: 'eventType' }, { type: 'terms', field: 'datasource', name: 'sources' }] });
    expect(m.events).toBe(written.length);
    expect(m.aggregations[0]).toEqual({ name: 'terms_eventType', type: 'terms', field: 'eventType', withValue: 60, missing: 0, buckets: tally(written.map((e) => e.type)) });
    const sources = written.map((e) => (e.source === 'crm' ? 'crm' : tenancy.dataSource.uid));
    expect(m.aggregations[1]).toMatchObject({ name: 'sources', buckets: tally(sources) });

    const filtered = await ok({ eventType: 'signup', datasource: 'crm', aggregations: [{ type: 'terms', field: 'eventType', size: 1 }] });
    const expected = written.filter((e) => e.type === 'signup' && e.source === 'crm').length;
    expect(expected).toBeGreaterThan(1);
    expect([filtered.events, filtered.aggregations[0]]).toEqual([expected, expect.objectContaining({ buckets: [{ value: 'signup', count: expected }] })]);
    // The xl plan reaches the event 200 days old.
    expect((await ok({ aggregations: [{ type: 'terms', field: 'eventType' }] }, { plan: 'xl' })).events).toBe(written.length + 1);
  });

  it('lists parameter values as sent, masked as the data mode and level say; missing counts events without the parameter', async () => {
    const asked = { aggregations: [{ type: 'terms', field: 'parameter', parameter: 'channel', size: 2 }, { type: 'terms', field: 'parameter', parameter: 'amount', size: 100 }, { type: 'terms', field: 'parameter', parameter: 'contact' }, { type: 'terms', field: 'parameter', parameter: 'constructor' }] };
    const clear = await ok(asked, { scopes: [...SCOPES, 'PROJECT_AUDIENCE_DATA_BASIC'] });
    expect(clear.aggregations[0]).toEqual({ name: 'terms_channel', type: 'terms', field: 'parameter', parameter: 'channel', withValue: 60, missing: 0, buckets: tally(written.map((e) => e.parameters.channel)).slice(0, 2) });
    const amounts = written.filter((e) => 'amount' in e.parameters).map((e) => e.parameters.amount);
    expect(clear.aggregations[1]).toMatchObject({ withValue: amounts.length, missing: 60 - amounts.length, buckets: tally(amounts) });
    expect(clear.aggregations[1].buckets.some((b: { value: unknown }) => typeof b.value === 'string')).toBe(true);
    expect(clear.aggregations[2]).toMatchObject({ buckets: [{ value: 'user0@example.com', count: 30 }, { value: 'user1@example.com', count: 30 }] });
    expect(clear.aggregations[3]).toMatchObject({ withValue: 1, buckets: [{ value: 'hostile', count: 1 }] });
    // Without the Basic level the emails are masked, and the two masked values that read alike are one bucket.
    const masked = await ok(asked);
    const contacts = masked.aggregations[2].buckets as Array<{ value: string; count: number }>;
    expect(contacts.map((b) => b.value).every((v) => !v.includes('user0') && !v.includes('user1'))).toBe(true);
    expect(contacts.reduce((n, b) => n + b.count, 0)).toBe(60);
    expect((await ok(asked, { dataMode: 'anonymized', scopes: [...SCOPES, 'PROJECT_AUDIENCE_DATA_BASIC'] })).aggregations[2].buckets).toEqual(masked.aggregations[2].buckets);
  });

  it('gives stats of a number parameter, counting only numbers; none gives nulls', async () => {
    const numbers = written.map((e) => e.parameters.amount).filter((v): v is number => typeof v === 'number');
    const sum = numbers.reduce((a, b) => a + b, 0);
    const m = await ok({ aggregations: [{ type: 'stats', parameter: 'amount' }, { type: 'stats', parameter: 'channel', name: 'texts' }] });
    expect(m.aggregations[0]).toEqual({ name: 'stats_amount', type: 'stats', parameter: 'amount', count: numbers.length, min: Math.min(...numbers), max: Math.max(...numbers), avg: expect.closeTo(sum / numbers.length, 6), sum: expect.closeTo(sum, 6) });
    expect(m.aggregations[1]).toEqual({ name: 'texts', type: 'stats', parameter: 'channel', count: 0, min: null, max: null, avg: null, sum: null });
  });

  it("counts events per local day in the project's time zone, empty days included, and per hour in another zone", async () => {
    const m = await ok({ aggregations: [{ type: 'date_histogram', interval: 'day' }, { type: 'date_histogram', interval: 'hour', timeZone: 'UTC' }, { type: 'date_histogram', interval: 'month', timeZone: 'Asia/Kolkata' }] });
    const [days, hours, months] = m.aggregations as Array<{ timeZone: string; buckets: Array<{ date: string; count: number }> }>;
    expect(days.timeZone).toBe('Asia/Kolkata');
    // Local midnights computed here from the fixed offset, every day from the first event's to the last's.
    const localDay = (t: number) => Math.floor((t + KOLKATA) / DAY) * DAY - KOLKATA;
    const expected = new Map<number, number>();
    for (let d = localDay(written[0].at); d <= localDay(written.at(-1)!.at); d += DAY) expected.set(d, 0);
    for (const e of written) expected.set(localDay(e.at), expected.get(localDay(e.at))! + 1);
    expect(days.buckets.map((b) => [Date.parse(b.date) / 1000, b.count])).toEqual([...expected.entries()]);
    expect(days.buckets.every((b) => /T00:00:00\+05:30$/.test(b.date))).toBe(true);
    expect(hours.buckets.reduce((n, b) => n + b.count, 0)).toBe(60);
    expect(hours.buckets.length).toBe(Math.floor(written.at(-1)!.at / HOUR) - Math.floor(written[0].at / HOUR) + 1);
    expect(hours.buckets.every((b) => /T\d\d:00:00\+00:00$/.test(b.date))).toBe(true);
    expect(months.buckets.every((b) => /-01T00:00:00\+05:30$/.test(b.date))).toBe(true);
    expect(months.buckets.reduce((n, b) => n + b.count, 0)).toBe(60);
    // A zone in another case is its canonical name (ClickHouse loads zones by file name, case-sensitively).
    const miscased = await ok({ aggregations: [{ type: 'date_histogram', interval: 'day', timeZone: 'asia/KOLKATA' }] });
    expect(miscased.aggregations[0]).toMatchObject({ timeZone: 'Asia/Calcutta', buckets: days.buckets });
    // Nothing in the range: no buckets.
    const empty = await ok({ eventType: 'none', aggregations: [{ type: 'date_histogram', interval: 'week' }, { type: 'stats', parameter: 'amount' }] });
    expect([empty.events, empty.aggregations[0].buckets]).toEqual([0, []]);
  });

  it('narrows to the events of the audience contacts a root or a segment selects now, through their source contacts', async () => {
    const tier = (value: string) => ({ version: '0.0.1', root: { type: 'attribute_condition', key: 'tier', operator: 'matches-string', values: [value] }, aggregations: [{ type: 'terms', field: 'datasource' }] });
    const web = written.filter((e) => e.source === 'web').length;
    const golden = await ok(tier('gold'));
    expect([golden.events, golden.aggregations[0].buckets]).toEqual([web, [{ value: tenancy.dataSource.uid, count: web }]]);
    expect((await ok(tier('silver'))).events).toBe(60 - web);
    expect((await ok(tier('bronze'))).events).toBe(0);
    const bad = await call({ root: { type: 'attribute_condition', key: 'nope', operator: 'matches-string', values: ['x'] }, aggregations: [{ type: 'terms', field: 'eventType' }] });
    expect([bad.status, bad.body.details.path]).toEqual([400, 'root.key']);

    // A saved segment in place of the root; an unknown one is 404, both at once 400.
    const [saved] = await db.query(`INSERT INTO segments (project_id, name, filter) VALUES ($1, 'Gold', $2) RETURNING id`, [tenancy.project.id, { version: '0.0.1', root: tier('gold').root }]);
    expect((await ok({ segment: saved.id, aggregations: [{ type: 'terms', field: 'eventType' }] })).events).toBe(web);
    expect((await call({ segment: randomUUID(), aggregations: [{ type: 'terms', field: 'eventType' }] })).status).toBe(404);
    const both = await call({ segment: saved.id, ...tier('gold') });
    expect([both.status, both.body.details.fields[0].path]).toEqual([400, 'segment']);
  });

  it('refuses a root whose events query would pass what ClickHouse parses: 400 at root, not a 500 (ADR 0058)', async () => {
    // Within AUDIENCE_FILTER_LIMITS, its count's query under 240 KiB (198 KB), but an events query names its contacts twice.
    const contains = (i: number) => ({ type: 'attribute_condition', key: 'tier', operator: 'contains-string', values: [`${'\\'.repeat(2040)}${i}`, 'x'] });
    const res = await call({ root: { type: 'group', operator: 'or', children: Array.from({ length: 24 }, (_, i) => contains(i)) }, aggregations: [{ type: 'terms', field: 'eventType' }] });
    expect([res.status, res.body.details]).toEqual([400, { path: 'root' }]);
    expect(res.body.message).toContain('too large');
  });

  it('refuses bad bodies with the field named, and a blocked project', async () => {
    const refused = async (body: unknown, path: string) => {
      const res = await call(body);
      expect([res.status, res.body.details?.fields?.[0]?.path]).toEqual([400, path]);
    };
    await refused({ aggregations: [] }, 'aggregations');
    await refused({ aggregations: [{ type: 'terms', field: 'parameter' }] }, 'aggregations[0].parameter');
    await refused({ aggregations: [{ type: 'terms', field: 'eventType', parameter: 'x' }] }, 'aggregations[0].parameter');
    await refused({ aggregations: [{ type: 'date_histogram', interval: 'day', timeZone: 'Mars/Olympus' }] }, 'aggregations[0].timeZone');
    await refused({ aggregations: [{ type: 'stats', parameter: 'amount' }, { type: 'stats', parameter: 'amount' }] }, 'aggregations[1].name');
    await refused({ aggregations: [{ type: 'stats', parameter: 'amount' }], extra: 1 }, 'extra');
    const unknown = await call({ datasource: 'nope', aggregations: [{ type: 'terms', field: 'eventType' }] });
    expect([unknown.status, unknown.body.details.known]).toEqual([400, expect.arrayContaining(['crm'])]);
    expect((await call({ aggregations: [{ type: 'terms', field: 'eventType' }] }, { dataMode: 'blocked' })).status).toBe(403);
  });

  it('refuses a histogram of more than 10,000 buckets, naming its interval', async () => {
    // A future-dated event and the xl plan's oldest: hours over more than 417 days.
    await ch.insert('events', [{ project_id: tenancy.project.id, data_source_id: crm.id, user_id: 'crm-user', event_id: 'future', event_type: 'far', event_date: now + 100 * DAY, received_at: now, param_keys: [], param_values: [] }, { project_id: tenancy.project.id, data_source_id: crm.id, user_id: 'crm-user', event_id: 'past', event_type: 'far', event_date: now - 340 * DAY, received_at: now, param_keys: [], param_values: [] }]);
    const body = { eventType: 'far', dateTo: new Date((now + 200 * DAY) * 1000).toISOString(), aggregations: [{ type: 'date_histogram', interval: 'hour' }] };
    const res = await call(body, { plan: 'xl' });
    expect([res.status, res.body.details.fields[0].path]).toEqual([400, 'aggregations[0].interval']);
    const days = await ok({ ...body, aggregations: [{ type: 'date_histogram', interval: 'day', timeZone: 'UTC' }] }, { plan: 'xl' });
    expect([days.events, days.aggregations[0].buckets.length]).toEqual([2, 441]);
  });
});

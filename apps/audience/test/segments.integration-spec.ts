import { randomUUID } from 'node:crypto';
import type { ClickHouse } from '@meld/clickhouse';
import type { Scope } from '@meld/contracts';
import { AttributeEntity } from '@meld/db';
import { AudienceSnapshotFixture, type Json, principalHeader, seedTenancy } from '@meld/fixtures';
import { migratedTestClickHouse } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { SegmentListSchema, SegmentReadSchema } from '../src/segments/segment.schema';
import { startAudience } from './app.fixture';

type Tenancy = Awaited<ReturnType<typeof seedTenancy>>;

const READ: Scope[] = ['PROJECT_AUDIENCE_READ'];
const WRITE: Scope[] = ['PROJECT_AUDIENCE_WRITE'];
const gold = { type: 'attribute_condition', key: 'loyalty_tier', operator: 'matches-string', values: ['gold'] };
const FILTER = { version: '0.0.1', root: { type: 'group', operator: 'and', children: [gold] } };

describe('segments: /v1/project/:project/segment', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let ch: ClickHouse;
  let t: Tenancy;
  let other: Tenancy;

  beforeAll(async () => {
    ch = await migratedTestClickHouse();
    ({ app, base, db } = await startAudience());
    t = await seedTenancy(db, 'segments');
    other = await seedTenancy(db, 'segments');
    await db.getRepository(AttributeEntity).insert({ projectId: t.project.id, uid: 'drink', label: 'Drink', type: 'string' });
    // Current audience in the snapshot the count reads: two gold (one reachable by SMS), one silver.
    const contact = (tier: string, channels: string[], extra: Record<string, string> = {}) => ({
      project_id: t.project.id,
      audience_id: randomUUID(),
      version: '1',
      deleted: 0,
      str_keys: ['loyalty_tier', ...Object.keys(extra)],
      str_values: [tier, ...Object.values(extra)],
      num_keys: [],
      num_values: [],
      channels,
      updated_at: Math.floor(Date.now() / 1000),
    });
    await new AudienceSnapshotFixture(ch, db).write([contact('gold', ['sms', 'rcs', 'whatsapp'], { _consent_sms: 'opt-in', _email: 'a@x.com' }), contact('gold', []), contact('silver', ['sms'])]);
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await ch?.close();
  });

  const call = async (method: string, path: string, { body, scopes = [...READ, ...WRITE], tenancy = t }: { body?: unknown; scopes?: Scope[]; tenancy?: Tenancy } = {}) => {
    const url = `${base}/v1/project/${tenancy.project.uid}/segment${path}`;
    const res = await fetch(url, {
      method,
      headers: { ...principalHeader(tenancy, { scopes }, { app: 'audience', method, url }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
  };
  const create = async (body: Json, tenancy = t) => {
    const res = await call('POST', '', { body, tenancy });
    expect([res.status, res.body.message]).toEqual([201, undefined]);
    return res.body.entity;
  };

  it('creates, reads, changes and deletes a segment', async () => {
    const created = await call('POST', '', { body: { name: '  Gold members ', filter: { root: gold } } });
    expect(created.status).toBe(201);
    expect(SegmentReadSchema.parse(created.body)).toBeTruthy();
    const s = created.body.entity;
    expect(s).toEqual({ id: expect.any(String), name: 'Gold members', description: null, filter: { version: '0.0.1', root: gold }, createdAt: expect.any(String), updatedAt: s.createdAt });
    expect((await call('GET', `/${s.id}`)).body).toEqual({ entity: s });

    await db.query(`UPDATE segments SET updated_at = '2020-01-01T00:00:00Z' WHERE id = $1`, [s.id]);
    const renamed = await call('PATCH', `/${s.id}`, { body: { name: 'Gold', description: 'tier gold' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.entity).toMatchObject({ id: s.id, name: 'Gold', description: 'tier gold', filter: s.filter, createdAt: s.createdAt });
    expect(renamed.body.entity.updatedAt > '2020-01-02').toBe(true);
    const refiltered = await call('PATCH', `/${s.id}`, { body: { description: null, filter: FILTER } });
    expect(refiltered.body.entity).toMatchObject({ name: 'Gold', description: null, filter: FILTER });

    expect((await call('DELETE', `/${s.id}`)).status).toBe(204);
    expect((await call('GET', `/${s.id}`)).status).toBe(404);
    expect((await call('DELETE', `/${s.id}`)).status).toBe(404);
  });

  it('refuses bad bodies: fields by path, filter nodes by their path in the body', async () => {
    const bad = async (method: string, path: string, body: unknown) => {
      const res = await call(method, path, { body });
      expect([res.status, res.body.statusCode]).toEqual([400, 400]);
      return res.body;
    };
    expect((await bad('POST', '', { filter: FILTER })).details.fields).toEqual([expect.objectContaining({ path: 'name' })]);
    expect((await bad('POST', '', { name: ' ', filter: FILTER })).details.fields).toEqual([expect.objectContaining({ path: 'name' })]);
    expect((await bad('POST', '', { name: 'x', filter: FILTER, colour: 'red' })).message).toContain('colour');
    expect((await bad('POST', '', { name: 'x', filter: { version: '0.0.1' } })).details.fields).toEqual([expect.objectContaining({ path: 'filter.root' })]);
    const node = await bad('POST', '', { name: 'x', filter: { root: { type: 'group', children: [gold, { type: 'attribute_condition', key: 'nope', operator: 'is-set', values: [] }] } } });
    expect(node.details).toEqual({ path: 'filter.root.children[1].key', allowed: expect.arrayContaining(['loyalty_tier', 'drink']) });
    expect(node.message).toContain('filter.root.children[1].key');
    expect((await bad('POST', '', { name: 'x', filter: { version: '2', root: gold } })).details).toEqual({ path: 'filter.version', allowed: ['0.0.1'] });
    // A lone surrogate would be stored as U+FFFD, a text other than the one sent: refused by name, as U+0000 is.
    expect((await bad('POST', '', { name: 'Gold \ud800', filter: FILTER })).details.fields).toEqual([{ path: 'name', message: expect.stringContaining('lone UTF-16 surrogate') }]);
    expect((await bad('POST', '', { name: 'x', description: '\udc00 tier', filter: FILTER })).details.fields).toEqual([{ path: 'description', message: expect.stringContaining('lone UTF-16 surrogate') }]);
    expect((await bad('POST', '', { name: 'Gold\u0000', filter: FILTER })).details.fields).toEqual([{ path: 'name', message: expect.stringContaining('U+0000') }]);
    // Postgres' jsonb cannot hold U+0000 either: a filter value holding it is refused by its path, not as "a value" somewhere.
    const nul = await bad('POST', '', { name: 'x', filter: { root: { type: 'group', children: [gold, { ...gold, values: ['gold', 'a\u0000b'] }] } } });
    expect([nul.details, nul.message]).toEqual([{ path: 'filter.root.children[1].values[1]' }, expect.stringContaining('U+0000')]);
    // Within every limit of the grammar, but its count's query would pass what ClickHouse parses: a segment that could never be counted.
    const needles = (i: number) => [`${'\\'.repeat(2040)}${i}`, 'x'];
    const large = { type: 'group_event', eventType: 'purchase', count: { operator: 'at-least', value: 2 }, children: Array.from({ length: 24 }, (_, i) => ({ type: 'event_condition', key: 'purchase.product-id', operator: 'contains-string', values: needles(i) })) };
    expect((await bad('POST', '', { name: 'x', filter: { root: large } })).details).toEqual({ path: 'filter.root' });
    const s = await create({ name: 'Kept', filter: FILTER });
    expect((await bad('PATCH', `/${s.id}`, {})).message).toContain('at least one');
    expect((await bad('PATCH', `/${s.id}`, { name: '\ud83d' })).details.fields).toEqual([{ path: 'name', message: expect.stringContaining('lone UTF-16 surrogate') }]);
    expect((await call('PATCH', `/${s.id}`, { body: { description: 'Gold 🥇' } })).body.entity.description).toBe('Gold 🥇');
    expect((await bad('PATCH', `/${s.id}`, { filter: { root: { ...gold, operator: 'greater-than' } } })).details.path).toBe('filter.root.operator');
    expect((await bad('PATCH', `/${s.id}`, { filter: { root: { ...gold, values: ['\u0000'] } } })).details).toEqual({ path: 'filter.root.values[0]' });
    expect((await bad('PATCH', `/${s.id}`, { filter: { root: large } })).details).toEqual({ path: 'filter.root' });
    expect((await call('GET', `/${s.id}`)).body.entity.filter).toEqual(FILTER);
  });

  it('404 for an unknown, malformed or foreign segment id', async () => {
    const foreign = await create({ name: 'Theirs', filter: { root: { type: 'group', children: [] } } }, other);
    for (const id of [randomUUID(), 'not-a-uuid', "1' OR '1'='1", foreign.id]) {
      for (const [method, path, body] of [['GET', `/${encodeURIComponent(id)}`], ['GET', `/${encodeURIComponent(id)}/count`], ['PATCH', `/${encodeURIComponent(id)}`, { name: 'x' }], ['DELETE', `/${encodeURIComponent(id)}`]] as Array<[string, string, unknown?]>) {
        const res = await call(method, path, { body });
        expect([id, method, path, res.status, res.body.message]).toEqual([id, method, path, 404, 'segment not found']);
      }
    }
    expect((await call('GET', `/${foreign.id}`, { tenancy: other })).status).toBe(200);
  });

  describe('list (list query filter)', () => {
    let ids: Record<string, string>;
    let l: Tenancy;
    beforeAll(async () => {
      l = await seedTenancy(db, 'segments-list');
      const root = { type: 'group', children: [] };
      ids = {};
      for (const [name, description, at] of [
        ['VIP buyers', 'spent a lot', '2026-01-01T00:00:00Z'],
        ['Newsletter', null, '2026-02-01T00:00:00Z'],
        ['vip churned', 'lost VIPs', '2026-03-01T00:00:00Z'],
      ] as const) {
        const s = await create({ name, description, filter: { root } }, l);
        await db.query(`UPDATE segments SET created_at = $2, updated_at = $2 WHERE id = $1`, [s.id, at]);
        ids[name] = s.id;
      }
    });
    const list = async (query: string) => {
      const res = await call('GET', `?${query}`, { tenancy: l, scopes: READ });
      return res;
    };
    const names = async (query: string) => {
      const res = await list(query);
      expect([res.status, res.body.message]).toEqual([200, undefined]);
      return res.body.entity.map((s: Json) => s.name);
    };

    it('lists the project segments oldest first, filtered, sorted and paged', async () => {
      const all = await list('');
      expect(SegmentListSchema.parse(all.body)).toBeTruthy();
      expect(all.body.entity.map((s: Json) => s.name)).toEqual(['VIP buyers', 'Newsletter', 'vip churned']);
      expect(all.body.metadata).toEqual({ start: 0, limit: 50, count: 3, total: 3 });
      expect(await names('name_containsi=vip')).toEqual(['VIP buyers', 'vip churned']);
      expect(await names('name_startsi=VIP&_sort=createdAt:-')).toEqual(['vip churned', 'VIP buyers']);
      expect(await names('description_exists=false')).toEqual(['Newsletter']);
      expect(await names('description_ncontainsi=vip')).toEqual(['VIP buyers', 'Newsletter']);
      expect(await names('createdAt_gte=2026-02-01T00:00:00Z&updatedAt_lt=2026-03-01T00:00:00.000001')).toEqual(['Newsletter', 'vip churned']);
      expect(await names(`id_in=${ids['Newsletter']}|${randomUUID()}`)).toEqual(['Newsletter']);
      const page = await list('_sort=name&_start=1&_limit=1');
      expect([page.body.entity.map((s: Json) => s.name), page.body.metadata]).toEqual([['VIP buyers'], { start: 1, limit: 1, count: 1, total: 3 }]);
    });

    it('the same query in _q gives the same answer', async () => {
      const q = { filter: [{ field: 'name', operator: 'containsi', value: ['vip', 'news'] }, { field: 'createdAt', operator: 'gt', value: '2026-01-15T00:00:00+01:00' }], sort: [['name', 'desc']] };
      const fromQ = await list(`_q=${encodeURIComponent(JSON.stringify(q))}`);
      expect(fromQ).toEqual(await list('name_containsi=vip|news&createdAt_gt=2026-01-15T00:00:00%2B01:00&_sort=name:-'));
      expect(fromQ.body.entity.map((s: Json) => s.name)).toEqual(['vip churned', 'Newsletter']);
    });

    it('states a total that agrees with its page when a segment is created or deleted between the page and the count', async () => {
      const query = db.query.bind(db);
      /** The list with `meanwhile` run after its page was read and before its count is. */
      const listWith = async (params: string, meanwhile: () => Promise<unknown>) => {
        let pageRead!: () => void;
        const read = new Promise<void>((resolve) => (pageRead = resolve));
        const spy = jest.spyOn(db, 'query').mockImplementation(async (text: string, parameters?: unknown) => {
          if (/^SELECT count\(\*\)::int AS n FROM segments/.test(text)) await read.then(meanwhile);
          const result: unknown = await query(text, parameters as unknown[] | undefined);
          if (/^SELECT g\.id, /.test(text)) pageRead();
          return result;
        });
        try {
          return (await list(params)).body.metadata;
        } finally {
          spy.mockRestore();
        }
      };
      const late = await listWith('', () => query(`INSERT INTO segments (project_id, name, filter) VALUES ($1, 'Late', $2) RETURNING id`, [l.project.id, FILTER]));
      expect(late).toEqual({ start: 0, limit: 50, count: 3, total: 3 });
      const [{ id }] = await query(`SELECT id FROM segments WHERE project_id = $1 AND name = 'Late'`, [l.project.id]);
      // The last page listed the third and fourth: a count taken after one was deleted said 3.
      expect(await listWith('_start=2&_limit=5', () => query(`DELETE FROM segments WHERE id = $1`, [id]))).toEqual({ start: 2, limit: 5, count: 2, total: 4 });
      expect(await names('')).toEqual(['VIP buyers', 'Newsletter', 'vip churned']);
    });

    it('400 naming the bad parameter', async () => {
      expect((await list('filter_eq=x')).body.details).toEqual({ parameter: 'filter_eq', allowed: ['id', 'name', 'description', 'createdAt', 'updatedAt'] });
      expect((await list('name_gt=a')).body.details.parameter).toBe('name_gt');
      expect((await list('_group=monthly')).body).toMatchObject({ statusCode: 400, message: '_group: segments do not group' });
    });
  });

  describe('count', () => {
    const count = async (id: string, query = '', scopes: Scope[] = READ) => call('GET', `/${id}/count${query}`, { scopes });

    it("is the audience count of the segment's filter, with compliance", async () => {
      const s = await create({ name: 'Gold', filter: FILTER });
      expect(await count(s.id)).toEqual({ status: 200, body: { metadata: { totalHits: 2 } } });
      const sms = await count(s.id, `?filterCompliance=${encodeURIComponent('{"sms":"opt-in"}')}`);
      expect(sms).toEqual({ status: 200, body: { metadata: { totalHits: 1, compliance: { sms: { mode: 'opt-in', reachable: 1, optedIn: 1, optedOut: 0, noConsent: 0, suppressed: 0, noValidAddress: 1 } } } } });
      const everyone = await create({ name: 'Everyone', filter: { root: { type: 'group', children: [] } } });
      expect((await count(everyone.id)).body).toEqual({ metadata: { totalHits: 3 } });
    });

    it('400 for a bad filterCompliance, naming it', async () => {
      const s = await create({ name: 'Gold', filter: FILTER });
      const notJson = await count(s.id, '?filterCompliance=sms');
      expect([notJson.status, notJson.body.details]).toEqual([400, { parameter: 'filterCompliance' }]);
      const badMode = await count(s.id, `?filterCompliance=${encodeURIComponent('{"sms":"maybe"}')}`);
      expect([badMode.status, badMode.body.message]).toEqual([400, expect.stringContaining('filterCompliance')]);
      const sms = encodeURIComponent('{"sms":"opt-in"}');
      const twice = await count(s.id, `?filterCompliance=${sms}&filterCompliance=${sms}`);
      expect([twice.status, twice.body.message, twice.body.details]).toEqual([400, 'filterCompliance: is given more than once', { parameter: 'filterCompliance' }]);
      // A compliance filter written as qs writes an object, or any other parameter, is refused: dropped, it counted everyone (2) as if opted in.
      for (const [query, parameter] of [['filterCompliance[sms]=opt-in', 'filterCompliance[sms]'], ['filterCompliance.sms=opt-in', 'filterCompliance.sms'], ['filtercompliance=' + sms, 'filtercompliance'], ['constructor=1', 'constructor'], ['__proto__=1', '__proto__']]) {
        const res = await count(s.id, `?${query}`);
        expect([query, res.status, res.body.details, res.body.message]).toEqual([query, 400, { parameter }, expect.stringContaining('unknown query parameter')]);
      }
    });

    it('needs the PII right when the filter names an email or phone attribute', async () => {
      const s = await create({ name: 'One email', filter: { root: { type: 'attribute_condition', key: '_email', operator: 'matches-string', values: ['a@x.com'] } } });
      const refused = await count(s.id);
      expect([refused.status, refused.body.details]).toEqual([403, { path: 'filter.root.key' }]);
      expect((await count(s.id, '', [...READ, 'PROJECT_AUDIENCE_DATA_BASIC'])).body).toEqual({ metadata: { totalHits: 1 } });
    });

    it('shows the values of its filter as a search by them is allowed: an email in clear with mayReadPii only (ADR 0121)', async () => {
      const s = await create({ name: 'Another email', filter: { root: { type: 'attribute_condition', key: '_email', operator: 'matches-string', values: ['a@x.com'] } } });
      expect(JSON.stringify(s.filter)).not.toContain('a@x.com');
      const basic = await call('GET', `/${s.id}`, { scopes: [...READ, 'PROJECT_AUDIENCE_DATA_BASIC'] });
      expect(basic.body.entity.filter.root.values).toEqual(['a@x.com']);
      const plain = await call('GET', `/${s.id}`, { scopes: READ });
      expect(plain.body.entity.filter.root).toMatchObject({ key: '_email', values: [expect.stringMatching(/^a\*+@/)] });
      const listed = await call('GET', '?_limit=100&_start=0', { scopes: READ });
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).not.toContain('a@x.com');
    });

    it("409 naming the node when the catalogue no longer has what the filter names", async () => {
      const s = await create({ name: 'Drinkers', filter: { root: { type: 'group', children: [gold, { type: 'attribute_condition', key: 'drink', operator: 'is-set', values: [] }] } } });
      await db.query(`DELETE FROM attributes WHERE project_id = $1 AND uid = 'drink'`, [t.project.id]);
      const drifted = await count(s.id);
      expect([drifted.status, drifted.body.details.path]).toEqual([409, 'filter.root.children[1].key']);
      expect((await call('GET', `/${s.id}`)).status).toBe(200);
    });
  });
});

import { DataSourceEntity, SenderCountryEntity, SenderEntity } from '@meld/db';
import { OPERATORS_BY_TYPE, VALUE_SHAPE, joinList } from '@meld/filters';
import { type Json, principalHeader, seedTenancy } from '@meld/fixtures';
import type { INestApplication } from '@nestjs/common';
import fc from 'fast-check';
import type { DataSource } from 'typeorm';
import { startAudience } from './app.fixture';

// The list query filter through HTTP, on every listing that has it: the URL form and `_q`
// of the same random query give the same answer, and an injection corpus pushed through
// every string a list query can carry is refused (400) or matches nothing; never a 500,
// never a change to the data.

type Tenancy = Awaited<ReturnType<typeof seedTenancy>>;

const CORPUS = [
  "'",
  "' OR '1'='1",
  "'; DROP TABLE data_sources; --",
  "'); DELETE FROM senders; --",
  '" OR ""="',
  ') OR TRUE --',
  '$1',
  '$$; SELECT pg_sleep(5); $$',
  '\\',
  '\\|',
  '%',
  '_%',
  '*',
  '|',
  '||',
  ',',
  ':-',
  '{"a":1}',
  '[]',
  'null',
  'NaN',
  '1e999',
  '-0',
  '0x10',
  '/**/',
  '\u0000',
  '\u202e',
  '😀',
  'x'.repeat(2000),
  '1 day ago; DROP TABLE senders',
  '2024-01-01T00:00:00Z OR 1=1',
  '__proto__',
  'constructor',
];
/** String-carrying fields of each listing (the first one names every row), and a few typed ones. */
const FIELDS_OF: Record<string, string[]> = {
  datasource: ['name', 'uid', 'connector', 'id', 'priority', 'createdAt'],
  'channel/sms/sender': ['alias', 'name', 'status', 'countries*country', 'countries*price', 'createdAt'],
  'channel/rcs/sender': ['alias', 'name', 'status', 'countries*effectiveStatus', 'countries*accepted', 'createdAt'],
  segment: ['name', 'description', 'id', 'createdAt', 'updatedAt'],
};
/** Already-encoded tricks that only a raw query string can carry. */
const RAW_QUERIES = ['name_eq=%ZZ', 'name_eq=%', 'name_eq=%E0%A4%A', '%00_eq=1', 'name_eq=a&&&==&=', '_q', '_q=', '_q=%7B', '_sort', '_start=&_limit=', 'name_eq', '*_eq=1', '_eq=1', 'name_=1'];

describe('list query filter over HTTP (datasources, senders, segments)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let t: Tenancy;

  beforeAll(async () => {
    ({ app, base, db } = await startAudience());
    t = await seedTenancy(db);
    await db.getRepository(DataSourceEntity).save([
      { projectId: t.project.id, uid: 'alpha', name: 'Alpha', connector: 'shopify', priority: 3 },
      { projectId: t.project.id, uid: 'beta', name: 'beta', connector: 'csv', priority: -2 },
      { projectId: t.project.id, uid: 'gamma', name: 'Gamma ray', connector: 'api', priority: 7 },
    ]);
    const s = await db.getRepository(SenderEntity).save({ projectId: t.project.id, channel: 'sms', alias: 'MELD', name: 'Meld', status: 'active' });
    await db.getRepository(SenderCountryEntity).save([{ senderId: s.id, country: 'FR' }]);
    await db.query(`INSERT INTO segments (project_id, name, description, filter) VALUES ($1, 'Gold', 'tier gold', '{"version":"0.0.1","root":{"type":"group","children":[]}}')`, [t.project.id]);
  });
  afterAll(() => app?.close());

  const LISTINGS = ['datasource', 'channel/sms/sender', 'channel/rcs/sender', 'segment'];
  const get = async (listing: string, query: string) => {
    const url = `${base}/v1/project/${t.project.uid}/${listing}?${query}`;
    const res = await fetch(url, { headers: principalHeader(t, { scopes: ['PROJECT_DATASOURCE_READ', 'PROJECT_DIRECT_READ', 'PROJECT_AUDIENCE_READ'] }, { app: 'audience', url }) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const snapshot = async () => ({
    dataSources: await db.query(`SELECT id, uid, name, connector, priority FROM data_sources WHERE project_id = $1 ORDER BY id`, [t.project.id]),
    senders: await db.query(`SELECT s.id, s.alias, c.country FROM senders s JOIN sender_countries c ON c.sender_id = s.id WHERE s.project_id = $1 ORDER BY s.id`, [t.project.id]),
    segments: await db.query(`SELECT id, name, description, filter, updated_at FROM segments WHERE project_id = $1 ORDER BY id`, [t.project.id]),
  });

  describe('URL form and _q give the same answer (property)', () => {
    type Field = { name: string; type: 'string' | 'number' | 'date' };
    const FIELDS: Field[] = [
      { name: 'name', type: 'string' },
      { name: 'uid', type: 'string' },
      { name: 'connector', type: 'string' },
      { name: 'priority', type: 'number' },
      { name: 'createdAt', type: 'date' },
    ];
    const scalar = (type: Field['type']) =>
      type === 'number'
        ? fc.integer({ min: -5, max: 10 }).map((n) => ({ text: String(n), json: n as unknown }))
        : type === 'date'
          ? fc.constantFrom('2020-01-01T00:00:00Z', '1 hour ago', '2100-01-01T00:00:00.000001', '3 days ago').map((d) => ({ text: d, json: d as unknown }))
          : fc.constantFrom('Alpha', 'a', 'beta', 'GAMMA', 'shopify', 'csv', 'api', 'ray', '').map((s) => ({ text: s, json: s as unknown }));
    const condition = fc
      .constantFrom(...FIELDS)
      .chain((f) => fc.constantFrom(...OPERATORS_BY_TYPE[f.type]).map((operator) => ({ ...f, operator })))
      .chain((c) => {
        const shape = VALUE_SHAPE[c.operator];
        const value =
          shape === 'flag'
            ? fc.boolean().map((b) => ({ text: String(b), json: b as unknown }))
            : shape === 'scalar'
              ? scalar(c.type)
              : fc.array(scalar(c.type), { minLength: shape === 'pair' ? 2 : 1, maxLength: shape === 'pair' ? 2 : 3 }).map((items) => ({ text: joinList(items.map((i) => i.text)), json: items.map((i) => i.json) as unknown }));
        return value.map((v) => ({ ...c, value: v }));
      });
    const query = fc.record({
      conditions: fc.uniqueArray(condition, { maxLength: 4, selector: (c) => `${c.name}_${c.operator}` }),
      sort: fc.constantFrom<Array<[string, 'asc' | 'desc']>>([], [['priority', 'desc']], [['name', 'asc'], ['createdAt', 'desc']]),
      paging: fc.option(fc.record({ start: fc.integer({ min: 0, max: 4 }), limit: fc.integer({ min: 1, max: 3 }) }), { nil: undefined }),
    });

    it('on data sources', async () => {
      await fc.assert(
        fc.asyncProperty(query, async (q) => {
          const url = new URLSearchParams();
          for (const c of q.conditions) url.append(`${c.name}_${c.operator}`, c.value.text);
          if (q.sort.length) url.set('_sort', q.sort.map(([f, d]) => `${f}:${d === 'desc' ? '-' : '+'}`).join(','));
          if (q.paging) {
            url.set('_start', String(q.paging.start));
            url.set('_limit', String(q.paging.limit));
          }
          const json = { filter: q.conditions.map((c) => ({ field: c.name, operator: c.operator, value: c.value.json })), sort: q.sort, ...(q.paging ? { paging: q.paging } : {}) };
          const fromUrl = await get('datasource', url.toString());
          const fromQ = await get('datasource', new URLSearchParams({ _q: JSON.stringify(json) }).toString());
          expect(fromUrl.status).toBe(200);
          expect(fromQ).toEqual(fromUrl);
        }),
        { numRuns: 60 },
      );
    });
  });

  describe('injection corpus', () => {
    let before: Json;
    beforeAll(async () => {
      before = await snapshot();
    });

    /** Every string a list query carries, for one listing: values, field names, operators, nested keys, sort, paging, group and _q. */
    function queriesWith(evil: string, listing: string): string[] {
      const fields = FIELDS_OF[listing];
      const p = (pairs: Array<[string, string]>) => new URLSearchParams(pairs).toString();
      const qs = (json: unknown) => p([['_q', JSON.stringify(json)]]);
      return [
        ...fields.flatMap((f) => ['eq', 'nei', 'in', 'containsi', 'ends', 'gt', 'range', 'exists'].map((op) => p([[`${f}_${op}`, evil]]))),
        p([[`${evil}_eq`, 'x']]),
        p([[`name_${evil}`, 'x']]),
        p([[`countries*${evil}_eq`, 'x']]),
        p([['_sort', evil]]),
        p([['_sort', `${evil}:-`]]),
        p([['_start', evil], ['_limit', evil]]),
        p([['_group', evil]]),
        p([['_q', evil]]),
        qs({ filter: [{ field: evil, operator: 'eq', value: 'x' }] }),
        qs({ filter: [{ field: 'name', operator: evil, value: 'x' }] }),
        qs({ filter: [{ field: 'name', operator: 'in', value: [evil, evil] }] }),
        qs({ filter: [{ field: '', operator: 'or', value: [{ field: 'name', operator: 'containsi', value: evil }] }] }),
        qs({ sort: [[evil, 'desc']], group: evil, paging: { start: evil, limit: 1 } }),
        qs({ [evil]: 1 }),
      ];
    }

    it.each(CORPUS.map((s) => [JSON.stringify(s).slice(0, 32), s]))('%s: 200 or 400 everywhere, never a match by accident', async (_name, evil) => {
      for (const listing of LISTINGS) {
        for (const query of queriesWith(evil, listing)) {
          const { status, body } = await get(listing, query);
          expect([query, status]).toEqual([query, status === 200 ? 200 : 400]);
          if (status === 400) expect(body.details.parameter).toEqual(expect.any(String));
        }
        // Equality with a corpus string selects nothing (no name or alias is one).
        const eq = await get(listing, new URLSearchParams([[`${FIELDS_OF[listing][0]}_eq`, evil]]).toString());
        if (eq.status === 200) expect(eq.body.entity).toEqual([]);
      }
    });

    it.each(RAW_QUERIES)('raw query string %s: 200 or 400', async (raw) => {
      for (const listing of LISTINGS) {
        const { status } = await get(listing, raw);
        expect([raw, listing, status === 200 || status === 400]).toEqual([raw, listing, true]);
      }
    });

    it('left the data as it was', async () => {
      expect(await snapshot()).toEqual(before);
    });
  });
});

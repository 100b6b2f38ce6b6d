import type { Client } from 'pg';
import { compileListQuery } from '../../src/list-query/compile';
import { ListQueryError } from '../../src/list-query/errors';
import { parseListQuery } from '../../src/list-query/parse';
import { itemTables } from './item-tables';
import { ITEMS } from './test-resource';

// Every operator's meaning checked on real Postgres (temporary tables of this session), and
// the injection corpus pushed through every string a list query can carry.

const ROWS = [
  { id: 'a', name: 'Ada', score: 10, created: "'2024-05-01T10:00:00.123456Z'", active: true, attributes: { drink: 'beer', age: 30, deep: { x: 1 } }, tags: ['vip', 'new'] },
  { id: 'b', name: 'bob', score: 2.5, created: "'2024-05-02T00:00:00Z'", active: false, attributes: { drink: 'wine', age: '30' }, tags: ['old'] },
  { id: 'c', name: null, score: null, created: "now() - interval '1 day'", active: null, attributes: {}, tags: [] },
  { id: 'd', name: 'Ada Lovelace', score: -1, created: "now() - interval '10 years'", active: true, attributes: { drink: null, age: 5 }, tags: ['VIP'] },
];

describe('list query on Postgres', () => {
  let db: Client;

  beforeAll(async () => {
    db = await itemTables();
    for (const r of ROWS) {
      await db.query(`INSERT INTO list_query_items VALUES ($1, $2, $3, ${r.created}, $4, $5)`, [r.id, r.name, r.score, r.active, JSON.stringify(r.attributes)]);
      for (const label of r.tags) await db.query(`INSERT INTO list_query_tags VALUES ($1, $2)`, [r.id, label]);
    }
  });
  afterAll(() => db.end());

  /** Ids the query selects, in the query's order. */
  async function ids(query: string | URLSearchParams): Promise<string[]> {
    const c = compileListQuery(parseListQuery(query, ITEMS), ITEMS);
    const { rows } = await db.query(`SELECT t.id FROM list_query_items t WHERE ${c.where} ORDER BY ${c.orderBy} LIMIT ${c.limit} OFFSET ${c.offset}`, c.params);
    return rows.map((r: { id: string }) => r.id);
  }
  const sorted = async (query: string) => (await ids(query)).sort();

  it.each([
    ['name_exists=true', ['a', 'b', 'd']],
    ['name_exists=false', ['c']],
    ['name_eq=Ada', ['a']],
    ['name_eqi=ada', ['a']],
    ['name_ne=Ada', ['b', 'c', 'd']],
    ['name_nei=ADA', ['b', 'c', 'd']],
    ['score_lt=2.5', ['d']],
    ['score_lte=2.5', ['b', 'd']],
    ['score_gt=2.5', ['a']],
    ['score_gte=2.5', ['a', 'b']],
    ['name_in=Ada|bob', ['a', 'b']],
    ['name_ini=ADA|BOB', ['a', 'b']],
    ['name_nin=Ada', ['b', 'c', 'd']],
    ['name_nini=ADA|bOb', ['c', 'd']],
    ['name_contains=Lov|ob', ['b', 'd']],
    ['name_containsi=ADA', ['a', 'd']],
    ['name_ncontains=Ada', ['b', 'c']],
    ['name_ncontainsi=a|O', ['c']],
    ['name_starts=Ada', ['a', 'd']],
    ['name_startsi=B', ['b']],
    ['name_ends=ace', ['d']],
    ['name_endsi=BOB', ['b']],
    ['score_range=-1|10', ['b', 'd']],
    ['score_between=-1|10', ['b']],
    ['score_betweeneq=-1|10', ['a', 'b', 'd']],
    ['active_eq=true', ['a', 'd']],
    ['active_ne=true', ['b', 'c']],
    // The microsecond form: .123456 is after .123 and before .124.
    ['createdAt_gt=2024-05-01T10:00:00.123', ['a', 'b', 'c']],
    ['createdAt_lte=2024-05-01T10:00:00.123455', ['d']],
    ['createdAt_eq=2024-05-01T12:00:00.123456+02:00', ['a']],
    ['createdAt_gt=3 day ago', ['c']],
    ['createdAt_between=3 years ago|1 year ago', ['a', 'b']],
    ['createdAt_lt=5 years ago', ['d']],
    // Every period of the relative form (c is a day old, d ten years).
    ['createdAt_gt=100000 seconds ago', ['c']],
    ['createdAt_gt=1441 minutes ago', ['c']],
    ['createdAt_gt=25 hours ago', ['c']],
    ['createdAt_gt=1 month ago', ['c']],
    ['createdAt_lt=119 months ago', ['d']],
    ['createdAt_range=121 months ago|2 days ago', ['a', 'b', 'd']],
    ['attributes*drink_eq=beer', ['a']],
    ['attributes*drink_eqi=WINE', ['b']],
    ['attributes*drink_exists=true', ['a', 'b']],
    ['attributes*drink_exists=false', ['c', 'd']],
    // Text comparison matches the number 30 and the string "30"; ordering only JSON numbers.
    ['attributes*age_eq=30', ['a', 'b']],
    ['attributes*age_gte=10', ['a']],
    ['attributes*deep*x_eq=1', ['a']],
    ['tags*label_eq=vip', ['a']],
    ['tags*label_eqi=vip', ['a', 'd']],
    ['tags*label_ne=vip', ['b', 'c', 'd']],
    ['tags*label_exists=false', ['c']],
    ['name_eq=Ada&name_eq=bob', ['a', 'b']],
    ['name_starts=Ada&score_gt=0', ['a']],
  ])('%s → %j', async (query, expected) => {
    expect(await sorted(query)).toEqual(expected);
  });

  it('sorts with nulls last, pages, and the URL and _q forms select the same rows', async () => {
    expect(await ids('_sort=score:-')).toEqual(['a', 'b', 'd', 'c']);
    expect(await ids('_sort=score')).toEqual(['d', 'b', 'a', 'c']);
    expect(await ids('_sort=attributes*drink:%2B&_start=1&_limit=2')).toEqual(['b', 'c']);
    const url = 'name_containsi=a&name_containsi=o&score_gte=0&_sort=name:-&_start=0&_limit=10';
    const q = { filter: [{ operator: 'or', value: [{ field: 'name', operator: 'containsi', value: 'a' }, { field: 'name', operator: 'containsi', value: 'o' }] }, { field: 'score', operator: 'gte', value: 0 }], sort: [['name', 'desc']], paging: { start: 0, limit: 10 } };
    expect(await ids(url)).toEqual(['b', 'a']);
    expect(await ids(new URLSearchParams({ _q: JSON.stringify(q) }))).toEqual(['b', 'a']);
  });

  it('_group buckets by UTC time', async () => {
    const c = compileListQuery(parseListQuery('_group=daily&createdAt_lt=2025-01-01T00:00:00Z&createdAt_gt=2024-01-01T00:00:00Z', ITEMS), ITEMS);
    const { rows } = await db.query(`SELECT ${c.group} AS bucket, count(*)::int AS n FROM list_query_items t WHERE ${c.where} GROUP BY 1 ORDER BY 1`, c.params.slice(0, -2));
    expect(rows.map((r: { bucket: Date; n: number }) => [r.bucket.toISOString(), r.n])).toEqual([
      ['2024-05-01T00:00:00.000Z', 1],
      ['2024-05-02T00:00:00.000Z', 1],
    ]);
  });

  describe('injection corpus: no effect, never a database error', () => {
    const CORPUS = [
      "'",
      "''",
      "' OR '1'='1",
      "'; DROP TABLE list_query_items; --",
      '"; DROP TABLE list_query_items; --',
      ') OR TRUE --',
      '$1',
      '$$ || pg_sleep(1) || $$',
      '\\',
      '\\\\|',
      '%',
      '_',
      '%_%',
      '*',
      '|',
      '||',
      '{}',
      '{"a":1}',
      '[1,2]',
      'null',
      'NaN',
      'Infinity',
      '1e308',
      '-0',
      '1;2',
      '/* */',
      '\u202e\u0000',
      '\ud800',
      'é\u0301😀',
      'x'.repeat(1000),
      'x'.repeat(1001),
      '2024-05-01T10:00:00Z\'; --',
      '1 day ago; DROP TABLE list_query_items',
      "now()'",
    ];
    const stringOperators = ['eq', 'eqi', 'ne', 'nei', 'in', 'ini', 'nin', 'nini', 'contains', 'containsi', 'ncontains', 'ncontainsi', 'starts', 'startsi', 'ends', 'endsi'];

    /** Runs the query; a refusal is fine, a database error is not. */
    async function survives(query: string | URLSearchParams): Promise<string[] | 'refused'> {
      try {
        return await ids(query);
      } catch (e) {
        if (e instanceof ListQueryError) return 'refused';
        throw e;
      }
    }

    it.each(CORPUS.map((s) => [JSON.stringify(s).slice(0, 40), s]))('%s as every value, field, key, sort and group, in both forms', async (_name, evil) => {
      const outcomes: Array<string[] | 'refused'> = [];
      const url = (key: string, value: string) => new URLSearchParams([[key, value]]);
      for (const op of stringOperators) {
        outcomes.push(await survives(url(`name_${op}`, evil)));
        outcomes.push(await survives(url(`tags*label_${op}`, evil)));
        outcomes.push(await survives(url(`attributes*drink_${op}`, evil)));
        outcomes.push(await survives(new URLSearchParams({ _q: JSON.stringify({ filter: [{ field: 'name', operator: op, value: ['in', 'ini', 'nin', 'nini'].includes(op) ? [evil] : evil }] }) })));
      }
      for (const op of ['eq', 'gt', 'range', 'exists']) {
        outcomes.push(await survives(url(`score_${op}`, evil)));
        outcomes.push(await survives(url(`createdAt_${op}`, evil)));
        outcomes.push(await survives(url(`active_${op}`, evil)));
      }
      outcomes.push(await survives(url(`${evil}_eq`, 'x')));
      outcomes.push(await survives(url(`attributes*${evil}_eq`, 'x')));
      outcomes.push(await survives(url(`name_${evil}`, 'x')));
      outcomes.push(await survives(url('_sort', evil)));
      outcomes.push(await survives(url('_sort', `attributes*${evil}:-`)));
      outcomes.push(await survives(url('_group', evil)));
      outcomes.push(await survives(url('_start', evil)));
      outcomes.push(await survives(url('_q', evil)));
      outcomes.push(await survives(new URLSearchParams({ _q: JSON.stringify({ filter: [{ field: evil, operator: evil, value: evil }], sort: [[evil, 'asc']], group: evil }) })));
      outcomes.push(await survives(new URLSearchParams({ _q: JSON.stringify({ filter: [{ field: `attributes.${evil}`, operator: 'eq', value: evil }] }) })));
      // Equality with the corpus string matches nothing: no row's name is any of them.
      expect(await survives(url('name_eq', evil))).toEqual(evil.length > 1000 || evil.includes('\u0000') ? 'refused' : []);
      expect(outcomes.length).toBeGreaterThan(70);
      // The table is still there, untouched.
      expect((await db.query('SELECT count(*)::int AS n FROM list_query_items')).rows[0].n).toBe(4);
    });
  });
});

/**
 * Injection corpus through every string a filter can carry: attribute keys, event types,
 * parameter keys (unknown ones, and catalogue names that are themselves hostile), string
 * values, date values, operator and node type names, field names. Each filter either is
 * refused with an AudienceFilterError (a clean 400) or runs on the real ClickHouse and selects
 * exactly what the reference evaluator selects; never another exception. A canary table and
 * the seeded rows are intact at the end.
 */
import { randomUUID } from 'node:crypto';
import { ident, sql, type ClickHouse } from '@meld/clickhouse';
import { migratedTestClickHouse } from '@meld/testing';
import { AudienceFilterError, audienceSelect, parseAudienceFilter, type FilterCatalogue } from '../../src/audience';
import { TEST_CATALOGUE } from './test-catalogue';
import { referenceSelect } from './reference';
import { seedWorld, type World } from './world';

const CORPUS = [
  "'", "\\'", '\\', "''", "'; DROP TABLE canary; --", "' OR 1 = 1 --", '") OR 1 --', "') OR ('1' = '1", '"', '\\"', '{"v":"x"}', '","', '["a"]',
  '\\u0041', '\\x27', '\n', '\r\n', '\t', '\0', "\0'", '\x1b[31m', '\x7f', '/*', '*/ 1', '--', '#', '`', '``; DROP TABLE canary', '%', '_', '.*', '^$', '(?i)a', '[',
  '{database}', '{x:String}', '$1', '?', 'true', 'null', '-1', '1e308', 'é', 'É', '🎉', '👩‍👩‍👧', '\u2028', '\uFEFF', "x' FORMAT TSV --", '\n;\nSELECT 1', 'SETTINGS readonly = 1',
  'k -> 1', 'arrayExists((k, x) -> 1, [1], [1])', "x') AS id UNION ALL SELECT 'pwned", 'a.b', '.', 'a'.repeat(2048),
];
const NOW = new Date('2026-06-15T12:00:00Z');
const N = NOW.getTime() / 1000;
const K = CORPUS.length;
const at = (i: number) => CORPUS[((i % K) + K) % K];

// Hostile names are catalogue names too: attributes, event types and parameters named by the corpus.
const catalogue: FilterCatalogue = {
  attributes: [...TEST_CATALOGUE.attributes, ...CORPUS.flatMap((s) => [{ uid: `s:${s}`, type: 'string' as const, multivalue: true }, { uid: `n:${s}`, type: 'number' as const, multivalue: false }])],
  eventTypes: [...TEST_CATALOGUE.eventTypes, ...CORPUS.map((s) => ({ uid: `t:${s}`, parameters: [{ uid: s, dataType: 'string' }, { uid: 'n', dataType: 'number' }] }))],
};

const world: World = {
  contacts: CORPUS.map((s, i) => ({
    id: `c${i}`,
    attributes: { city: s, tags: [at(i + 1), at(i + 2)], score: [0, -0, 1e308, 1e-300, 2 ** 53 + 2, -1e-7][i % 6], [`s:${s}`]: [s, at(i + 1)], [`n:${s}`]: i },
  })),
  sources: CORPUS.map((_, i) => ({ ds: 'ds', user: `u${i}`, aid: `c${i}` })),
  events: CORPUS.flatMap((s, i) => [
    { id: `p${i}`, ds: 'ds', user: `u${i}`, type: 'page.view', date: N - i * 3600, params: { url: s } },
    { id: `b${i}`, ds: 'ds', user: `u${i}`, type: 'purchase', date: N - i * 3600, params: { 'product-id': at(i + 3), categories: [s, at(i + 1)] } },
    { id: `t${i}`, ds: 'ds', user: `u${i}`, type: `t:${s}`, date: N - i * 3600, params: { [s]: at(i + 2), n: i } },
  ]),
};

let ch: ClickHouse;
const projectId = randomUUID();
const canary = `audience_filter_canary_${process.pid}_${Date.now().toString(36)}`;
const outcomes = { refused: 0, ran: 0 };

beforeAll(async () => {
  ch = await migratedTestClickHouse();
  await ch.command(sql`CREATE TABLE ${ident(canary)} (v String) ENGINE = TinyLog`);
  await ch.command(sql`INSERT INTO ${ident(canary)} VALUES (${'still here'})`);
  await seedWorld(ch, projectId, world, catalogue);
});

afterAll(async () => {
  await ch?.command(sql`DROP TABLE IF EXISTS ${ident(canary)}`);
  await ch?.close();
});

/** A clean refusal, or the reference's answer from ClickHouse; anything else fails the test. */
async function check(filter: unknown): Promise<void> {
  let root;
  try {
    root = parseAudienceFilter(filter, catalogue);
  } catch (err) {
    if (!(err instanceof AudienceFilterError)) throw err;
    expect(err.statusCode).toBe(400);
    outcomes.refused++;
    return;
  }
  const rows = await ch.query<{ id: string }>(audienceSelect({ projectId, root, columns: sql`audience_id AS id`, now: NOW }));
  expect(rows.map((r) => r.id).sort()).toEqual([...referenceSelect(root, world, N)].sort());
  outcomes.ran++;
}

const STRING_OPERATORS = ['matches-string', 'not-matches-string', 'contains-string', 'starts-with-string', 'ends-with-string'];
const attr = (key: string, operator: string, values: unknown[] = []) => ({ type: 'attribute_condition', key, operator, values });
const ev = (key: string, operator: string, values: unknown[] = []) => ({ type: 'event_condition', key, operator, values });

describe.each(CORPUS.map((s, i) => [JSON.stringify(s).slice(0, 40), s, i] as const))('corpus string %s', (_, s, i) => {
  it('as string values of attributes and parameters: no effect, the right contacts', async () => {
    await Promise.all([
      ...STRING_OPERATORS.flatMap((op) => [check(attr('city', op, [s])), check(ev('page.view.url', op, [s]))]),
      check(attr('tags', 'matches-string', [s, at(i + 5)])),
      check(attr('tags', 'not-matches-string', [s])),
      check({ type: 'group_event', eventType: 'purchase', timeframe: { lastDays: 30 }, children: [ev('purchase.categories', 'matches-string', [s]), ev('purchase.product-id', 'is-set')] }),
    ]);
  });

  it('as catalogue names (attribute, event type, parameter): no effect, the right contacts', async () => {
    await Promise.all([
      check(attr(`s:${s}`, 'matches-string', [s])),
      check(attr(`s:${s}`, 'contains-string', [at(i + 1)])),
      check(attr(`s:${s}`, 'is-not-set')),
      check(attr(`n:${s}`, 'equals-number', [i])),
      check(ev(`t:${s}.${s}`, 'matches-string', [at(i + 2)])),
      check({ type: 'group_event', eventType: `t:${s}`, count: { operator: 'exactly', value: 1 }, children: [ev(`t:${s}.n`, 'greater-than', [i - 1]), ev(`t:${s}.${s}`, 'is-set')] }),
    ]);
  });

  it('where a name, date, number or keyword is expected: a clean refusal', async () => {
    const refusedBefore = outcomes.refused;
    await check(attr(s, 'is-set'));
    await check(ev(s, 'is-set'));
    await check(ev(`purchase.${s}`, 'is-set'));
    await check({ type: 'group_event', eventType: s });
    await check({ type: 'group_event', eventType: 'login', timeframe: { from: s } });
    await check({ type: 'group_event', eventType: 'login', timeframe: { to: s } });
    await check({ type: 'group_event', eventType: 'login', timeframe: { lastDays: s } });
    await check({ type: 'group_event', eventType: 'login', count: { operator: s, value: 1 } });
    await check(attr('birthday', 'before-date', [s]));
    await check(attr('last_login', 'in-last-days', [s]));
    await check(attr('score', 'greater-than', [s]));
    await check(attr('city', s, ['x']));
    await check({ type: s });
    await check({ type: 'group', operator: s, children: [] });
    await check({ type: 'group', children: [], [s]: 1 });
    expect(outcomes.refused - refusedBefore).toBe(15);
  });
});

it('refuses strings ClickHouse cannot hold (lone surrogates) cleanly', async () => {
  await expect(check(attr('city', 'matches-string', ['a\uD800']))).resolves.toBeUndefined();
  await expect(check(ev('page.view.url', 'contains-string', ['\uDC00']))).resolves.toBeUndefined();
});

it('takes extreme numbers as values', async () => {
  // (Stored values avoid subnormals: ClickHouse's JSONEachRow input reads 5e-324 as 0.)
  const values = [0, -0, 1e308, -1e308, 1e-300, 5e-324, 2 ** 53 + 2, 2 ** 64, -1e-7, Number.MAX_SAFE_INTEGER];
  await Promise.all(
    values.flatMap((v) => [check(attr('score', 'equals-number', [v, 1])), check(attr('score', 'greater-than', [v])), check(attr('score', 'between', [Math.min(v, 0), Math.max(v, 0)]))]),
  );
});

it('left everything else as it was', async () => {
  expect(await ch.query(sql`SELECT v FROM ${ident(canary)}`)).toEqual([{ v: 'still here' }]);
  const [row] = await ch.query<{ n: string }>(sql`SELECT sum(sign) AS n FROM audience_snapshot WHERE project_id = ${projectId} AND deleted = 0`);
  expect(Number(row.n)).toBe(K);
  expect(outcomes.ran).toBeGreaterThan(K * 18);
});

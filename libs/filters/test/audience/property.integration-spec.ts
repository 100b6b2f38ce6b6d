/**
 * Property tests on the real ClickHouse (meld_test): random filter trees over random audiences
 * with events select, through the compiled SQL, exactly the contacts the in-memory reference
 * evaluator (reference.ts) selects. Worlds are sampled and written once (each under its own
 * project id, with stale versions, tombstones, superseded memberships and redelivered events);
 * fast-check then generates and shrinks filters over them.
 *
 * MELD_FUZZ_RUNS (default 200): half of it trees, half batches of up to 25 single conditions.
 * MELD_FUZZ_SEED replays a run.
 */
import fc from 'fast-check';
import { ident, join, sql, type ClickHouse } from '@meld/clickhouse';
import { migratedTestClickHouse } from '@meld/testing';
import { audienceCount, audiencePage, audienceSelect, parseAudienceFilter } from '../../src/audience';
import { compileNode } from '../../src/audience/compile';
import { isoSecondsSql } from '../../src/audience/sql-dates';
import { TEST_CATALOGUE } from './test-catalogue';
import { filterArbitrary } from './arbitraries';
import { referenceSelect } from './reference';
import { type World } from './world';
import { FUZZ_N, FUZZ_NOW, FUZZ_RUNS, FUZZ_SEED, seededWorlds } from './fuzz';

const [NOW, N, SEED] = [FUZZ_NOW, FUZZ_N, FUZZ_SEED];
const RUNS = FUZZ_RUNS;
const WORLDS = 20;

let ch: ClickHouse;
let worlds: Array<{ projectId: string; world: World }>;

beforeAll(async () => {
  ch = await migratedTestClickHouse();
  worlds = await seededWorlds(ch, WORLDS);
});

afterAll(async () => {
  await ch?.close();
});

async function agrees(i: number, filter: object): Promise<void> {
  const { projectId, world } = worlds[i];
  const root = parseAudienceFilter(filter, TEST_CATALOGUE);
  const rows = await ch.query<{ id: string }>(audienceSelect({ projectId, root, columns: sql`audience_id AS id`, now: NOW }));
  const expected = [...referenceSelect(root, world, N)].sort();
  expect(rows.map((r) => r.id).sort()).toEqual(expected);
  const [count] = await ch.query<{ n: string }>(audienceCount({ projectId, root, counts: [['n']], now: NOW }));
  expect(Number(count.n)).toBe(expected.length);
  // A scroll through small pages lists the same contacts, each once, in one order.
  const listed: Array<{ hash: string; id: string }> = [];
  for (;;) {
    const page = await ch.query<{ hash: string; id: string }>(audiencePage({ projectId, root, now: NOW, after: listed.at(-1), limit: PAGE }));
    listed.push(...page);
    if (page.length < PAGE) break;
  }
  expect(listed.map((r) => r.id).sort()).toEqual(expected);
  // Two windows of the hash space hold the same contacts between them.
  const half = (2n ** 63n).toString();
  const low = await ch.query<{ id: string }>(audiencePage({ projectId, root, now: NOW, window: { from: '0', below: half }, limit: 1000 }));
  const high = await ch.query<{ id: string }>(audiencePage({ projectId, root, now: NOW, window: { from: half }, limit: 1000 }));
  expect([...low, ...high].map((r) => r.id)).toEqual(listed.map((r) => r.id));
  const offset = await ch.query<{ id: string }>(audiencePage({ projectId, root, now: NOW, offset: PAGE, limit: PAGE }));
  expect(offset.map((r) => r.id)).toEqual(listed.slice(PAGE, 2 * PAGE).map((r) => r.id));
}

/** Small, so that a world's contacts take several pages. */
const PAGE = 3;

const world = fc.integer({ min: 0, max: WORLDS - 1 });

// Single conditions, many per query: each is compiled as a column over the same rows (the
// expression a WHERE would use), so every operator on every attribute and parameter is drawn
// often enough for an off-by-one in one of them to show.
it(`single conditions select what the reference evaluator selects (seed ${SEED})`, async () => {
  const batch = fc.array(filterArbitrary(TEST_CATALOGUE, N, 'condition'), { minLength: 1, maxLength: 25 });
  await fc.assert(
    fc.asyncProperty(world, batch, async (i, filters) => {
      const { projectId, world: w } = worlds[i];
      const roots = filters.map((f) => parseAudienceFilter(f, TEST_CATALOGUE));
      const columns = join([sql`audience_id AS id`, ...roots.map((r, k) => sql`${compileNode(r, { projectId, now: N })} AS ${ident(`m${k}`)}`)]);
      const rows = await ch.query<Record<string, string | number>>(audienceSelect({ projectId, columns, now: NOW }));
      roots.forEach((root, k) => {
        const selected = rows.filter((r) => Number(r[`m${k}`]) === 1).map((r) => String(r.id)).sort();
        expect({ filter: filters[k], selected }).toEqual({ filter: filters[k], selected: [...referenceSelect(root, w, N)].sort() });
      });
    }),
    { numRuns: Math.ceil(RUNS / 2), seed: SEED },
  );
}, 120_000);

it(`filter trees select what the reference evaluator selects (seed ${SEED})`, async () => {
  await fc.assert(fc.asyncProperty(world, filterArbitrary(TEST_CATALOGUE, N), agrees), { numRuns: Math.ceil(RUNS / 2), seed: SEED });
}, 120_000);

it('event parameter dates convert to the same unix seconds as JavaScript, for every year and offset', async () => {
  const iso = fc
    .tuple(
      fc.date({ min: new Date('0001-03-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }),
      fc.constantFrom('', 'Z', '+00:00', '+05:30', '-0800', '+14:00', '-12:00'),
      fc.constantFrom('', ':07', ':59.999'),
    )
    .map(([d, offset, secs]) => (offset === '' ? d.toISOString().slice(0, 10) : `${d.toISOString().slice(0, 16)}${secs}${offset}`));
  const values = fc.sample(iso, { numRuns: 2000, seed: SEED });
  const [row] = await ch.query<{ s: string[] }>(sql`SELECT arrayMap(s -> toString(${isoSecondsSql(sql`s`)}), ${values}) AS s`);
  const expected = values.map((v) => String(Math.floor(Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v) / 1000)));
  expect(row.s.map((s, i) => [values[i], s])).toEqual(values.map((v, i) => [v, expected[i]]));
});

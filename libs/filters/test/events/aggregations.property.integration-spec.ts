/**
 * Property tests of the event aggregations' SQL (ADR 0335) on the real ClickHouse: over random
 * worlds (events with redelivered copies, memberships superseded or deleted; the audience
 * filter tests' worlds) and random scopes (a type or not, a date range, an audience filter or
 * not), every aggregate equals a tally of the world's events, each counted once.
 *
 * MELD_FUZZ_RUNS (default 200, a fifth of it here) and MELD_FUZZ_SEED as in the filter tests.
 */
import fc from 'fast-check';
import type { ClickHouse } from '@meld/clickhouse';
import { migratedTestClickHouse } from '@meld/testing';
import { parseAudienceFilter, type AudienceFilterNode } from '../../src/audience';
import { eventHistogramOf, eventsInScope, eventsOfAudience, eventsWithParameter, eventTermsOf, parameterStatsOf, parameterTermsOf, type EventScope } from '../../src/events';
import { filterArbitrary } from '../audience/arbitraries';
import { referenceSelect } from '../audience/reference';
import { TEST_CATALOGUE } from '../audience/test-catalogue';
import { type World, type WorldEvent } from '../audience/world';
import { FUZZ_N, FUZZ_NOW, FUZZ_RUNS, FUZZ_SEED, seededWorlds } from '../audience/fuzz';

const [NOW, N, SEED] = [FUZZ_NOW, FUZZ_N, FUZZ_SEED];
const DAY = 86_400;
const RUNS = Math.ceil(FUZZ_RUNS / 5);
const WORLDS = 8;

let ch: ClickHouse;
let worlds: Array<{ projectId: string; world: World }>;

beforeAll(async () => {
  ch = await migratedTestClickHouse();
  worlds = await seededWorlds(ch, WORLDS);
}, 60_000);

afterAll(async () => {
  await ch?.close();
});

const byCount = ([a, x]: [string, number], [b, y]: [string, number]) => y - x || (a < b ? -1 : a > b ? 1 : 0);

/** Counts by key, most first, ties by key (JS order: ClickHouse orders ties by bytes, so results are compared re-sorted). */
function tally(keys: readonly string[]): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return [...counts.entries()].sort(byCount);
}

/** Buckets as read, most first as the SQL returned them (checked), then in `tally`'s order. */
function buckets(rows: ReadonlyArray<{ value: string; n: string }>): Array<[string, number]> {
  const pairs = rows.map((r): [string, number] => [r.value, Number(r.n)]);
  pairs.forEach(([, n], i) => expect(i === 0 || pairs[i - 1][1] >= n).toBe(true));
  return [...pairs].sort(byCount);
}

/** The world's events in scope, each once (the world holds each id once; its copies are only in ClickHouse). */
function referenceEvents(w: World, scope: { eventType?: string; from: number; to: number }, root: AudienceFilterNode | undefined): WorldEvent[] {
  const selected = root ? referenceSelect(root, w, N) : undefined;
  const owner = new Map(w.sources.map((s) => [`${s.ds}/${s.user}`, s.aid]));
  return w.events.filter((e) => {
    if (scope.eventType !== undefined && e.type !== scope.eventType) return false;
    if (e.date < scope.from || e.date >= scope.to) return false;
    if (!selected) return true;
    const aid = owner.get(`${e.ds}/${e.user}`);
    return aid !== undefined && aid !== null && selected.has(aid);
  });
}

const eventTypes = TEST_CATALOGUE.eventTypes.map((t) => t.uid);
const parameters = [...new Set(TEST_CATALOGUE.eventTypes.flatMap((t) => t.parameters.map((p) => p.uid)))];
const scopeArbitrary = fc.record({
  world: fc.integer({ min: 0, max: WORLDS - 1 }),
  eventType: fc.option(fc.constantFrom(...eventTypes), { nil: undefined }),
  // A range in days around the worlds' instants (a few years around NOW), or everything.
  days: fc.option(fc.tuple(fc.integer({ min: -800, max: 100 }), fc.integer({ min: 1, max: 900 })), { nil: undefined }),
  root: fc.option(filterArbitrary(TEST_CATALOGUE, N, 'condition'), { nil: undefined, freq: 2 }),
  parameter: fc.constantFrom(...parameters),
});

it(`every aggregate equals a tally of the events in scope, each once (seed ${SEED})`, async () => {
  await fc.assert(
    fc.asyncProperty(scopeArbitrary, async ({ world: i, eventType, days, root: filter, parameter }) => {
      const { projectId, world: w } = worlds[i];
      const [from, to] = days ? [N + days[0] * DAY, N + (days[0] + days[1]) * DAY] : [0, 2 ** 32 - 1];
      const root = filter ? parseAudienceFilter(filter, TEST_CATALOGUE) : undefined;
      const scope: EventScope = { projectId, eventType, range: { from, to }, ...(root ? { contacts: eventsOfAudience({ projectId, root, now: NOW }) } : {}) };
      const expected = referenceEvents(w, { eventType, from, to }, root);

      const [inScope] = await ch.query<{ events: string; first: number; last: number }>(eventsInScope(scope));
      const dates = expected.map((e) => e.date);
      expect([Number(inScope.events), ...(dates.length ? [Number(inScope.first), Number(inScope.last)] : [])]).toEqual([expected.length, ...(dates.length ? [Math.min(...dates), Math.max(...dates)] : [])]);

      const byType = await ch.query<{ value: string; n: string }>(eventTermsOf(scope, 'event_type', 100));
      expect(buckets(byType)).toEqual(tally(expected.map((e) => e.type)));
      const bySource = await ch.query<{ value: string; n: string }>(eventTermsOf(scope, 'data_source_id', 100));
      expect(buckets(bySource)).toEqual(tally(expected.map((e) => e.ds)));

      const byDay = await ch.query<{ b: number; n: string }>(eventHistogramOf(scope, 'day', 'UTC'));
      const perDay = tally(expected.map((e) => String(Math.floor(e.date / DAY) * DAY))).sort(([a], [b]) => Number(a) - Number(b));
      expect(byDay.map((r) => [String(r.b), Number(r.n)])).toEqual(perDay);

      const carrying = expected.filter((e) => e.params[parameter] !== undefined);
      const [withIt] = await ch.query<{ n: string }>(eventsWithParameter(scope, parameter));
      expect(Number(withIt.n)).toBe(carrying.length);
      const values = await ch.query<{ value: string; n: string }>(parameterTermsOf(scope, parameter, 100));
      expect(buckets(values)).toEqual(tally(carrying.map((e) => JSON.stringify(e.params[parameter]))));

      const numbers = carrying.map((e) => e.params[parameter]).filter((v): v is number => typeof v === 'number');
      const [stats] = await ch.query<{ count: string; min: number | null; max: number | null; sum: number | null }>(parameterStatsOf(scope, parameter));
      expect(Number(stats.count)).toBe(numbers.length);
      if (numbers.length) {
        expect([Number(stats.min), Number(stats.max)]).toEqual([Math.min(...numbers), Math.max(...numbers)]);
        expect(Number(stats.sum)).toBeCloseTo(numbers.reduce((a, b) => a + b, 0), 6);
      } else expect([stats.min, stats.max, stats.sum]).toEqual([null, null, null]);
    }),
    { numRuns: RUNS, seed: SEED },
  );
}, 120_000);

/**
 * audience-lists: a page of POST /audience/scroll and /audience/search (ADR 0330) on 1M audience
 * contacts, as the audience app reads it (libs/filters `windowedAudiencePage`: the filter's hash
 * windows in ClickHouse, then the contacts from Postgres by primary key, as ListsRepository), beside baselines timed in the same run
 * (interleaved, rotating order): the hand-written count of the same filter (`sum(sign)`, what
 * `/audience/count` costs), a bare read of as many ids that ignores the snapshot's noise
 * (`sign = 1`, no per-contact sum), and the page query without hash windows (the first version:
 * everything after the position grouped and sorted), for one attribute condition (1 contact in
 * 50) and the whole audience, at the start and from the middle. Then whole scrolls, timed once each.
 * Event pages of POST /event/scroll and /event/search (ADR 0332: libs/filters `windowedEventsPage`,
 * date windows) on --events events over 365 days, beside the hand-written count of the
 * look-back's events and the same page read in one window over everything after its position, also
 * narrowed to the events of an audience filter's contacts.
 * Sorted search pages (ADR 0337: `audienceSortedPage`, the whole match ordered per page) beside the
 * same counts.
 * Aggregations of POST /audience/aggregations (ADR 0333: `audienceTerms`, stats through
 * `audienceSelect`) beside hand-written GROUP BY queries over the same snapshot, and of POST
 * /event/aggregations (ADR 0335: each event once) beside a GROUP BY that counts copies too.
 *
 * Options: --contacts N (1,000,000), --events N (2,000,000), --reps R (30), --warmup W (3), --keep
 * (leave the bench databases), --reuse (use what a --keep run left when the sizes match).
 *
 * Data: ClickHouse database `meld_bench_lists` (migrated like the real one; snapshot with 5% stale
 * versions and 1% tombstones, merges stopped, checked unmerged before and after the timing) and
 * Postgres schema `meld_bench_lists` of the dev database (ids as text: the generated ones are
 * `a<n>`); both dropped at the end unless --keep.
 */
import { cpus, loadavg } from 'node:os';
import { Client } from 'pg';
import { createClickHouse, ident, migrateClickHouse, raw, sql, type ClickHouse, type Sql } from '../../libs/clickhouse/src';
import {
  audiencePage, audienceSelect, audienceSortedPage, audienceTerms, bucketStarts, catalogueAttributeSql, eventHistogramOf, eventsInScope, eventsOfAudience, eventTermsOf, parameterStatsOf, parameterTermsOf, parseAudienceFilter,
  windowedAudiencePage, windowedEventsPage, type AudienceFilterNode, type EventPageOptions, type PagePosition,
} from '../../libs/filters/src';
import { CATALOGUE, DAY, PROJECT, snapshotCancellations, writeAudienceContacts, writeEvents, writeMembership } from '../lib/audience-bench-data';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { settleStores } from '../lib/settle';
import { median, percentile } from '../lib/stats';

const DATABASE = 'meld_bench_lists';
const PAGE = 1000;

interface Variant {
  name: string;
  baseline?: string;
  /** Rows (or contacts) the read returned: checked equal across rounds. */
  run(): Promise<number>;
}

const rowsOf = async (ch: ClickHouse, query: Sql): Promise<Array<{ hash: string; id: string }>> => ch.query<{ hash: string; id: string }>(query);

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const contacts = ctx.args.int('contacts', 1_000_000);
  const events = ctx.args.int('events', 2_000_000);
  const reps = ctx.args.int('reps', 30);
  const warmup = ctx.args.int('warmup', 3);
  const keep = ctx.args.flag('keep');
  const url = process.env.MELD_CLICKHOUSE_URL;
  const pgUrl = process.env.MELD_POSTGRES_URL;
  if (!url || !pgUrl) throw new Error('MELD_CLICKHOUSE_URL / MELD_POSTGRES_URL not set: run through `npm run bench -- audience-lists` with the stack up');
  const load = [loadavg()[0]];
  const ch = createClickHouse({ url, database: DATABASE, requestTimeoutMs: 900_000 });
  const pg = new Client({ connectionString: pgUrl });
  try {
    await ch.ensureDatabase();
    await migrateClickHouse({ client: ch });
    await pg.connect();
    await ch.command(sql`CREATE TABLE IF NOT EXISTS bench_meta (contacts UInt64, events UInt64, now UInt32) ENGINE = TinyLog`);
    const [meta] = await ch.query<{ contacts: string; events: string; now: number }>(sql`SELECT * FROM bench_meta`);
    const [pgRows] = (await pg.query(`SELECT to_regclass('${DATABASE}.audience_contacts') IS NOT NULL AS present`)).rows as Array<{ present: boolean }>;
    const reuse = ctx.args.flag('reuse') && meta && Number(meta.contacts) === contacts && Number(meta.events) === events && pgRows.present;
    const now = reuse ? Number(meta.now) : Math.floor(Date.now() / 1000);
    await ch.command(sql`SYSTEM STOP MERGES ${ident(DATABASE, 'audience_snapshot')}`);
    if (!reuse) {
      const started = Date.now();
      for (const table of ['audience_snapshot', 'events', 'audience_membership', 'bench_meta']) await ch.command(sql`TRUNCATE TABLE ${raw(table)}`);
      await writeAudienceContacts(ch, contacts, now, false);
      ctx.log(`ClickHouse snapshot in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      await writeEvents(ch, contacts, events, now, (done) => ctx.log(`events: ${done.toLocaleString('en-US')} in ${((Date.now() - started) / 1000).toFixed(1)} s`));
      // The contacts as identity-merge keeps them (ids as text here: the generated ids are `a<n>`).
      await pg.query(`DROP SCHEMA IF EXISTS ${DATABASE} CASCADE`);
      await pg.query(`CREATE SCHEMA ${DATABASE}`);
      await pg.query(`CREATE UNLOGGED TABLE ${DATABASE}.audience_contacts (project_id text NOT NULL, id text NOT NULL, attributes jsonb NOT NULL, datasources jsonb NOT NULL, ds_contact_ids jsonb NOT NULL, PRIMARY KEY (project_id, id))`);
      await pg.query(
        `INSERT INTO ${DATABASE}.audience_contacts
         SELECT $1, 'a' || i, jsonb_build_object('_user_id', 'u' || i, '_first_name', 'First ' || i, '_email', 'user' || i || '@example.com', 'city', 'Town ' || i % 50, 'plan', 'pro', 'score', i % 1000, 'vip', i % 2 = 0),
                '["ds1"]', jsonb_build_array('u' || i)
           FROM generate_series(0, $2::int - 1) i`,
        [PROJECT, contacts],
      );
      await pg.query(`ANALYZE ${DATABASE}.audience_contacts`);
      await ch.command(sql`INSERT INTO bench_meta VALUES (${contacts}, ${events}, ${now})`);
      ctx.log(`Postgres contacts in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    } else ctx.log('reusing the data of an earlier --keep run');
    // Source contacts' membership for event aggregations narrowed by an audience filter (written once, also into a --keep run's data).
    const [members] = await ch.query<{ n: string }>(sql`SELECT count() AS n FROM audience_membership WHERE project_id = ${PROJECT}`);
    if (Number(members.n) === 0) await writeMembership(ch, contacts);
    ctx.log(await settleStores({ clickhouse: { ch, database: DATABASE } }, 300_000));
    const cancellations = snapshotCancellations(contacts);
    const unmerged = async (when: string) => {
      const [row] = await ch.query<{ n: string }>(sql`SELECT count() AS n FROM audience_snapshot WHERE project_id = ${PROJECT} AND sign = -1`);
      if (Number(row.n) !== cancellations) throw new Error(`${when}: ${row.n} −1 rows in audience_snapshot, ${cancellations} written: merges collapsed the noise (rerun without --reuse)`);
    };
    await unmerged('before timing');

    const at = new Date(now * 1000);
    const paris: AudienceFilterNode = parseAudienceFilter({ type: 'attribute_condition', key: 'city', operator: 'matches-string', values: ['Paris'] }, CATALOGUE);
    const P = sql`project_id = ${PROJECT} AND deleted = 0`;
    const parisSql = sql`lowerUTF8(s0) = 'paris'`;
    const count = async (query: Sql) => Number((await ch.query<{ n: string }>(query))[0]?.n ?? Number.NaN);
    // The middle of each listing, as a scroll that read half of it would have it.
    const middle = async (root?: AudienceFilterNode) => {
      const [total] = await ch.query<{ n: string }>(sql`SELECT sum(sign) AS n FROM audience_snapshot WHERE ${P}${root ? sql` AND ${parisSql}` : raw('')}`);
      const [row] = await rowsOf(ch, audiencePage({ projectId: PROJECT, root, now: at, offset: Math.floor(Number(total.n) / 2), limit: 1 }));
      return row;
    };
    const [parisMiddle, allMiddle] = [await middle(paris), await middle()];
    // A page as the audience app reads it (AudiencePages): the windows in ClickHouse, then the contacts by primary key (text ids here).
    const pages = {
      async page(request: { root?: AudienceFilterNode; after?: PagePosition; offset?: number; span?: bigint; limit: number }) {
        const page = await windowedAudiencePage((statement) => ch.query(statement), { projectId: PROJECT, now: at, ...request });
        const found = await pg.query(`SELECT id, attributes, datasources, ds_contact_ids FROM ${DATABASE}.audience_contacts WHERE project_id = $1 AND id = ANY($2::text[])`, [PROJECT, page.rows.map((r) => r.id)]);
        return { contacts: found.rows, more: page.more, last: page.rows.at(-1), span: page.span };
      },
    };
    const first = async (root?: AudienceFilterNode) => pages.page({ root, limit: PAGE });
    // A scroll's next page carries the window width its first page was given (in the scroll id).
    const [parisSpan, allSpan] = [(await first(paris)).span, (await first()).span];
    const apiPage = (name: string, baseline: string, request: { root?: AudienceFilterNode; after?: { hash: string; id: string }; offset?: number; span?: bigint; limit: number }): Variant => ({
      name,
      baseline,
      run: async () => (await pages.page(request)).contacts.length,
    });
    const unwindowed = (name: string, baseline: string, opts: { root?: AudienceFilterNode; after?: { hash: string; id: string }; offset?: number; limit: number }): Variant => ({
      name,
      baseline,
      run: async () => (await rowsOf(ch, audiencePage({ projectId: PROJECT, now: at, ...opts }))).length,
    });
    // A sorted search page as the app reads it (AudiencePages, ADR 0337): the whole match ordered in ClickHouse, then the contacts by primary key.
    const sortedPage = (name: string, baseline: string, root: AudienceFilterNode | undefined, keys: ReadonlyArray<{ attribute: string; descending: boolean }>, offset: number): Variant => ({
      name,
      baseline,
      run: async () => {
        const sort = keys.map((k) => ({ attribute: catalogueAttributeSql(CATALOGUE.attributes.find((a) => a.uid === k.attribute)!), descending: k.descending }));
        const rows = await rowsOf(ch, audienceSortedPage({ projectId: PROJECT, root, now: at, sort, offset, limit: 101 }));
        const found = await pg.query(`SELECT id, attributes FROM ${DATABASE}.audience_contacts WHERE project_id = $1 AND id = ANY($2::text[])`, [PROJECT, rows.slice(0, 100).map((r) => r.id)]);
        return found.rows.length;
      },
    });
    const parisCount = 'count, city = Paris (hand-written sum(sign))';
    const allCount = 'count, whole audience (hand-written sum(sign))';
    const parisIds = await rowsOf(ch, audiencePage({ projectId: PROJECT, root: paris, now: at, limit: PAGE }));
    const variants: Variant[] = [
      { name: parisCount, run: () => count(sql`SELECT sum(sign) AS n FROM audience_snapshot WHERE ${P} AND ${parisSql}`) },
      { name: allCount, run: () => count(sql`SELECT sum(sign) AS n FROM audience_snapshot WHERE ${P}`) },
      {
        name: `bare read of ${PAGE} ids, city = Paris (sign = 1, no per-contact sum)`,
        baseline: parisCount,
        run: async () => (await ch.query(sql`SELECT audience_id FROM audience_snapshot WHERE ${P} AND sign = 1 AND ${parisSql} LIMIT ${PAGE}`)).length,
      },
      apiPage(`scroll, first page of ${PAGE}, city = Paris (count + window + Postgres)`, parisCount, { root: paris, limit: PAGE }),
      apiPage(`scroll, next page of ${PAGE}, city = Paris, from the middle (window + Postgres)`, parisCount, { root: paris, after: parisMiddle, span: parisSpan, limit: PAGE }),
      apiPage(`scroll, first page of ${PAGE}, whole audience (count + window + Postgres)`, allCount, { limit: PAGE }),
      apiPage(`scroll, next page of ${PAGE}, whole audience, from the middle (window + Postgres)`, allCount, { after: allMiddle, span: allSpan, limit: PAGE }),
      apiPage('search, page of 100 at from 9,900, whole audience (count + window + Postgres)', allCount, { offset: 9_900, limit: 100 }),
      sortedPage('search sorted by score desc, page of 100 at from 0, whole audience (ClickHouse + Postgres)', allCount, undefined, [{ attribute: 'score', descending: true }], 0),
      sortedPage('search sorted by score desc, page of 100 at from 9,900, whole audience', allCount, undefined, [{ attribute: 'score', descending: true }], 9_900),
      {
        // The one-read form counts and pages use (sum(sign) per contact, values at its newest version): exact under concurrent writes, but it groups the whole match.
        name: 'grouped per contact instead: sorted by score desc, 101 ids at from 0, whole audience (sum(sign), argMax)',
        baseline: allCount,
        run: async () =>
          (
            await rowsOf(
              ch,
              sql`SELECT toString(audience_hash) AS hash, audience_id AS id, argMax(bitAnd(num_slots, 1) != 0, version) AS p, argMax(n0, version) AS v FROM audience_snapshot WHERE ${P}
                   GROUP BY audience_hash, audience_id HAVING sum(sign) > 0 ORDER BY p DESC, v DESC, audience_hash, audience_id LIMIT 0, 101`,
            )
          ).length,
      },
      sortedPage('search sorted by city, then signup desc, page of 100 at from 0, whole audience', allCount, undefined, [{ attribute: 'city', descending: false }, { attribute: 'signup', descending: true }], 0),
      sortedPage('search sorted by score desc, page of 100 at from 0, city = Paris', parisCount, paris, [{ attribute: 'score', descending: true }], 0),
      unwindowed(`without windows: page of ${PAGE}, city = Paris, from the middle`, parisCount, { root: paris, after: parisMiddle, limit: PAGE + 1 }),
      unwindowed(`without windows: page of ${PAGE}, whole audience, first`, allCount, { limit: PAGE + 1 }),
      {
        name: `Postgres alone: ${PAGE} contacts by primary key`,
        run: async () =>
          (await pg.query(`SELECT id, attributes, datasources, ds_contact_ids FROM ${DATABASE}.audience_contacts WHERE project_id = $1 AND id = ANY($2::text[])`, [PROJECT, parisIds.map((r) => r.id)])).rows.length,
      },
    ];
    // Event pages as the app reads them, over the look-back of an xl plan (365 days) up to a day from now.
    const range = { from: now - 365 * DAY, to: now + DAY };
    const eventPage = (o: Partial<EventPageOptions> & { limit: number }) => windowedEventsPage((statement) => ch.query(statement), { projectId: PROJECT, range, order: 'asc', ...o });
    const eventMiddle = { date: now - 182 * DAY, id: '' };
    const [eventSpan, purchaseSpan] = [(await eventPage({ limit: PAGE })).span, (await eventPage({ eventType: 'purchase', limit: PAGE })).span];
    const eventCount = 'event count, look-back (hand-written count())';
    const unwindowedEvents = `without windows: event page of ${PAGE}, from the middle`;
    variants.push(
      { name: eventCount, run: () => count(sql`SELECT count() AS n FROM events WHERE project_id = ${PROJECT} AND event_date >= toDateTime(${range.from}) AND event_date < toDateTime(${range.to})`) },
      { name: `event scroll, first page of ${PAGE} (count + window)`, baseline: eventCount, run: async () => (await eventPage({ limit: PAGE })).rows.length },
      {
        name: unwindowedEvents,
        baseline: eventCount,
        run: async () => (await eventPage({ after: eventMiddle, span: range.to - range.from, limit: PAGE })).rows.length,
      },
      // A next page is compared with the same page read in one window: what the windows are for.
      { name: `event scroll, next page of ${PAGE}, from the middle (window)`, baseline: unwindowedEvents, run: async () => (await eventPage({ after: eventMiddle, span: eventSpan, limit: PAGE })).rows.length },
      { name: `event scroll, next page of ${PAGE}, purchases, from the middle (window)`, baseline: unwindowedEvents, run: async () => (await eventPage({ eventType: 'purchase', after: eventMiddle, span: purchaseSpan, limit: PAGE })).rows.length },
      { name: 'event search, newest page of 100 (count + window)', baseline: eventCount, run: async () => (await eventPage({ order: 'desc', limit: 100 })).rows.length },
      // With an audience filter (ADR 0332): the membership of the filter's contacts read again in each window.
      {
        name: 'event search, newest page of 100, contacts in Paris (count + windows, eventsOfAudience)',
        baseline: eventCount,
        run: async () => (await eventPage({ order: 'desc', limit: 100, contacts: eventsOfAudience({ projectId: PROJECT, root: paris, now: at }) })).rows.length,
      },
      {
        name: `event scroll, first page of ${PAGE}, contacts in Paris (count + windows, eventsOfAudience)`,
        baseline: eventCount,
        run: async () => (await eventPage({ limit: PAGE, contacts: eventsOfAudience({ projectId: PROJECT, root: paris, now: at }) })).rows.length,
      },
    );
    // Aggregations as the app reads them, beside the GROUP BY one would write by hand knowing the slot column.
    const attr = (uid: string) => catalogueAttributeSql(CATALOGUE.attributes.find((a) => a.uid === uid)!);
    const handTerms = 'terms of city, hand-written (GROUP BY the slot column, sum(sign))';
    variants.push(
      { name: handTerms, run: async () => (await ch.query(sql`SELECT s0 AS v, sum(sign) AS n FROM audience_snapshot WHERE ${P} AND has(str_keys, 'city') GROUP BY v HAVING n > 0 ORDER BY n DESC, v LIMIT 10`)).length },
      { name: 'terms of city, 10 values (audienceTerms)', baseline: handTerms, run: async () => (await ch.query(audienceTerms({ projectId: PROJECT, attribute: attr('city'), multivalue: false, limit: 10, now: at }))).length },
      { name: 'terms of tags, multivalue, 10 values (audienceTerms)', baseline: handTerms, run: async () => (await ch.query(audienceTerms({ projectId: PROJECT, attribute: attr('tags'), multivalue: true, limit: 10, now: at }))).length },
      { name: 'terms of city, city = Paris (audienceTerms)', baseline: parisCount, run: async () => (await ch.query(audienceTerms({ projectId: PROJECT, root: paris, attribute: attr('city'), multivalue: false, limit: 10, now: at }))).length },
      {
        name: 'stats of score (audienceSelect)',
        baseline: allCount,
        run: async () => {
          const s = attr('score');
          return (await ch.query(audienceSelect({ projectId: PROJECT, now: at, columns: sql`countIf(${s.present}) AS c, minIf(${s.value}, ${s.present}) AS lo, maxIf(${s.value}, ${s.present}) AS hi, avgIf(${s.value}, ${s.present}) AS a` }))).length;
        },
      },
    );
    // Event aggregations as the app reads them (ADR 0335: each event once), beside the GROUP BY that counts copies too, and
    // beside the distinct ids per type and day of the version before, which counted twice a resend dated apart.
    const scope = { projectId: PROJECT, range };
    const inRange = sql`project_id = ${PROJECT} AND event_date >= toDateTime(${range.from}) AND event_date < toDateTime(${range.to})`;
    const handEventTerms = 'events by type, hand-written (GROUP BY event_type, copies counted)';
    const perDayScope = 'events in scope, per type and day (before: copies dated apart twice)';
    const perDayTerms = 'terms of event type, per type and day (before: copies dated apart twice)';
    const perDayHistogram = 'events per day, Europe/Paris, per type and day (before: copies dated apart twice)';
    variants.push(
      { name: handEventTerms, run: async () => (await ch.query(sql`SELECT event_type, count() AS n FROM events WHERE ${inRange} GROUP BY event_type`)).length },
      {
        name: perDayScope,
        run: async () => (await ch.query(sql`SELECT sum(n) AS events, min(lo) AS first, max(hi) AS last FROM (SELECT uniqExact(event_id) AS n, min(event_date) AS lo, max(event_date) AS hi FROM events WHERE ${inRange} GROUP BY event_type, toDate(event_date))`)).length,
      },
      {
        name: perDayTerms,
        run: async () => (await ch.query(sql`SELECT v, sum(n) AS n FROM (SELECT event_type AS v, uniqExact(event_id) AS n FROM events WHERE ${inRange} GROUP BY v, event_type, toDate(event_date)) GROUP BY v ORDER BY n DESC, v LIMIT 10`)).length,
      },
      {
        name: perDayHistogram,
        run: async () => {
          const counted = sql`SELECT b, sum(n) AS n FROM (SELECT toUInt32(toStartOfDay(event_date, 'Europe/Paris')) AS b, uniqExact(event_id) AS n FROM events WHERE ${inRange} GROUP BY b, event_type, toDate(event_date)) GROUP BY b ORDER BY b`;
          const [rows, starts] = await Promise.all([ch.query(counted), ch.query(bucketStarts('day', 'Europe/Paris', range.from, now))]);
          return rows.length + starts.length;
        },
      },
      { name: 'events in scope, each once (eventsInScope)', baseline: perDayScope, run: async () => (await ch.query(eventsInScope(scope))).length },
      { name: 'terms of event type (eventTermsOf)', baseline: perDayTerms, run: async () => (await ch.query(eventTermsOf(scope, 'event_type', 10))).length },
      { name: 'terms of product-id, 10 values (parameterTermsOf)', baseline: handEventTerms, run: async () => (await ch.query(parameterTermsOf(scope, 'product-id', 10))).length },
      { name: 'stats of amount (parameterStatsOf)', baseline: handEventTerms, run: async () => (await ch.query(parameterStatsOf(scope, 'amount'))).length },
      { name: 'events in scope, contacts in Paris (eventsInScope + eventsOfAudience)', baseline: handEventTerms, run: async () => (await ch.query(eventsInScope({ ...scope, contacts: eventsOfAudience({ projectId: PROJECT, root: paris, now: at }) }))).length },
      { name: 'terms of event type, contacts in Paris (eventTermsOf + eventsOfAudience)', baseline: handEventTerms, run: async () => (await ch.query(eventTermsOf({ ...scope, contacts: eventsOfAudience({ projectId: PROJECT, root: paris, now: at }) }, 'event_type', 10))).length },
      {
        name: 'events per day over 365 days, Europe/Paris (eventHistogramOf + bucketStarts)',
        baseline: perDayHistogram,
        run: async () => {
          const [counted, starts] = await Promise.all([ch.query(eventHistogramOf(scope, 'day', 'Europe/Paris')), ch.query(bucketStarts('day', 'Europe/Paris', range.from, now))]);
          return counted.length + starts.length;
        },
      },
    );
    const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    const results = new Map<string, number>();
    for (let round = -warmup; round < reps; round++) {
      const shift = ((round % variants.length) + variants.length) % variants.length;
      for (const v of [...variants.slice(shift), ...variants.slice(0, shift)]) {
        const t0 = performance.now();
        const n = await v.run();
        const ms = performance.now() - t0;
        if (round < 0) {
          results.set(v.name, n);
          continue;
        }
        if (results.get(v.name) !== n) throw new Error(`${v.name}: result changed between runs (${results.get(v.name)} then ${n})`);
        times.get(v.name)!.push(ms);
      }
      if (round >= 0 && (round + 1) % 10 === 0) ctx.log(`round ${round + 1}/${reps}`);
    }

    // Whole scrolls through the app's page reader, as a client follows scroll ids.
    const wholeScroll = async (root?: AudienceFilterNode) => {
      const t0 = performance.now();
      let state: { after?: { hash: string; id: string }; span?: bigint } = {};
      let [listed, pagesRead] = [0, 0];
      for (;;) {
        const p = await pages.page({ root, limit: PAGE, ...state });
        [listed, pagesRead] = [listed + p.contacts.length, pagesRead + 1];
        if (!p.more) break;
        state = { after: p.last, span: p.span };
        if (pagesRead % 200 === 0) ctx.log(`whole scroll: ${listed.toLocaleString('en-US')} contacts`);
      }
      return { ms: performance.now() - t0, listed, pagesRead };
    };
    const signupScroll = await (async () => {
      const t0 = performance.now();
      let state: { after?: { date: number; id: string }; span?: number } = {};
      let listed = 0;
      for (;;) {
        const p = await eventPage({ eventType: 'signup', limit: PAGE, ...state });
        listed += p.rows.length;
        const last = p.rows.at(-1);
        if (!p.more || !last) break;
        state = { after: { date: Number(last.ts), id: last.id }, span: p.span };
      }
      return { ms: performance.now() - t0, listed };
    })();
    const [signups] = await ch.query<{ n: string }>(sql`SELECT uniqExact(event_id) AS n FROM events WHERE project_id = ${PROJECT} AND event_type = 'signup' AND event_date >= toDateTime(${range.from})`);
    const parisScroll = await wholeScroll(paris);
    const allScroll = await wholeScroll();
    load.push(loadavg()[0]);
    await unmerged('after timing');

    const rows: BenchRow[] = variants.map((v) => {
      const t = times.get(v.name)!;
      return { name: v.name, throughput: 1000 / median(t), p50Ms: median(t), p99Ms: percentile(t, 99), peakRssMb: {}, baseline: v.baseline, runs: t.length };
    });
    const byName = new Map(rows.map((r) => [r.name, r]));
    const p50 = (name: string) => byName.get(name)!.p50Ms;
    const nextAll = p50(`scroll, next page of ${PAGE}, whole audience, from the middle (window + Postgres)`);
    const rate = (s: { ms: number; listed: number }) => Math.round((s.listed / s.ms) * 1000).toLocaleString('en-US');
    return {
      title: `audience-lists: scroll and search pages on ${contacts.toLocaleString('en-US')} contacts and ${events.toLocaleString('en-US')} events as the audience app reads them, beside the count of the same filter (${reps} interleaved rounds)`,
      units: { throughput: 'pages (or queries)/s, from the p50', latency: 'one page or query, client side, before HTTP and serialization to JSON' },
      rows,
      notes: [
        `hash windows against one query over everything after the position: whole audience ${(p50(`without windows: page of ${PAGE}, whole audience, first`) / nextAll).toFixed(1)}× faster for a next page (${nextAll.toFixed(0)} ms against ${p50(`without windows: page of ${PAGE}, whole audience, first`).toFixed(0)} ms at the start without windows)`,
        `whole scroll, city = Paris: ${parisScroll.listed.toLocaleString('en-US')} of ${results.get(parisCount)!.toLocaleString('en-US')} counted contacts in ${parisScroll.pagesRead} pages, ${(parisScroll.ms / 1000).toFixed(1)} s, ${rate(parisScroll)} contacts/s`,
        `whole scroll, whole audience: ${allScroll.listed.toLocaleString('en-US')} of ${results.get(allCount)!.toLocaleString('en-US')} counted contacts in ${allScroll.pagesRead} pages, ${(allScroll.ms / 1000).toFixed(1)} s, ${rate(allScroll)} contacts/s (goal: a next page ≤ 1.5× one count of the whole audience: ${nextAll <= 1.5 * p50(allCount) ? 'MET' : 'MISSED'})`,
        `whole event scroll, signups: ${signupScroll.listed.toLocaleString('en-US')} of ${Number(signups.n).toLocaleString('en-US')} distinct events, ${(signupScroll.ms / 1000).toFixed(1)} s, ${rate(signupScroll)} events/s (without the per-page membership read of audience ids)`,
        `event windows against one window over everything after the position: ${(p50(`without windows: event page of ${PAGE}, from the middle`) / p50(`event scroll, next page of ${PAGE}, from the middle (window)`)).toFixed(1)}× faster for a next page`,
        `fastest run: ${variants.map((v) => `${v.name} ${Math.min(...times.get(v.name)!).toFixed(0)} ms`).join('; ')}`,
        `snapshot noise: 5% stale versions, 1% tombstones (${cancellations.toLocaleString('en-US')} −1 rows, merges stopped, checked unmerged before and after timing); contacts missing from a listing: ${parisScroll.listed === results.get(parisCount) && allScroll.listed === results.get(allCount) ? 'none' : 'SOME'}`,
        `load average (1 min) at start ${load[0].toFixed(1)}, at end ${load[1].toFixed(1)} on ${cpus().length} cores shared with other work`,
      ],
      goals: [
        { row: `event scroll, next page of ${PAGE}, from the middle (window)`, minRatio: 3 },
        { row: `scroll, next page of ${PAGE}, city = Paris, from the middle (window + Postgres)`, minRatio: 1 / 1.5 },
        { row: `scroll, next page of ${PAGE}, whole audience, from the middle (window + Postgres)`, minRatio: 1 / 1.5 },
      ],
    };
  } finally {
    if (!keep) {
      await ch.command(sql`DROP DATABASE IF EXISTS ${ident(DATABASE)}`).catch(() => undefined);
      await pg.query(`DROP SCHEMA IF EXISTS ${DATABASE} CASCADE`).catch(() => undefined);
    }
    await ch.close();
    await pg.end().catch(() => undefined);
  }
}

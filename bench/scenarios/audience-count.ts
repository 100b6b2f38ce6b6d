/**
 * audience-count: POST /audience/count's query (libs/filters audienceCount: `sum(sign)` over the
 * collapsing snapshot, ADR 0243) on 1M audience contacts and 10M events in ClickHouse, beside the
 * equivalent hand-written SQL timed in the same run (interleaved, rotating order), for (a) one
 * attribute condition, (b) an and/or of four conditions, (c) a group_event with a parameter
 * condition over 30 days. Second baselines: the same hand-written conditions on
 * audience_contacts FINAL (the read before ADR 0243) and, for (a) and (b), split into two
 * hash-range branches (ADR 0061's split, re-measured without FINAL); the compiled filter is also
 * timed as the one-row-per-contact read of probes with a root (audienceSelect, liveSnapshot).
 * For (c) the cheapest Postgres alternative is timed too: a per-contact events table (events
 * already attached to audience ids, as identity-merge could maintain it) with a btree index,
 * so the choice of store rests on figures (ADR 0063).
 * (a) and (b) are also timed without the attributes' slot columns (migration 0005), from the
 * key/value arrays alone (ADR 0064).
 *
 * Options: --contacts N (1,000,000), --events N (10,000,000), --reps R (30), --warmup W (3),
 * --pg-events N (as --events; 0 skips Postgres), --keep (leave the bench databases for a
 * rerun), --reuse (use the data a --keep run left when its sizes match).
 *
 * Data: everything generated inside the stores (INSERT … SELECT FROM numbers / generate_series)
 * into ClickHouse database `meld_bench_count` (migrated like the real one) and Postgres schema
 * `meld_bench_count` of the dev database; both dropped at the end unless --keep. The snapshot
 * tables hold noise a real one has: 5% stale versions and 1% tombstones, in audience_contacts
 * as older parts, in audience_snapshot as the sink writes them (+1 states, −1 cancellations, one
 * part per step) with its merges stopped, checked unmerged before and after the timing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { createClickHouse, ident, join as sqlJoin, migrateClickHouse, raw, sql, type ClickHouse, type Sql } from '../../libs/clickhouse/src';
import { audienceCount, audienceSelect, parseAudienceFilter, type AudienceFilterNode, type FilterCatalogue } from '../../libs/filters/src';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { RssSampler, type WatchedProcess } from '../lib/processes';
import { CATALOGUE, DAY, EVENT_TYPES, PROJECT, SKUS, snapshotCancellations, writeAudienceContacts, writeEvents } from '../lib/audience-bench-data';
import { settleStores } from '../lib/settle';
import { median, percentile } from '../lib/stats';

const DATABASE = 'meld_bench_count';
const ARRAYS_ONLY: FilterCatalogue = { ...CATALOGUE, attributes: CATALOGUE.attributes.map((a) => ({ ...a, slot: null })) };

interface Variant {
  name: string;
  /** Row name of the hand-written baseline this one is compared with. */
  baseline?: string;
  run(): Promise<number>;
}

async function generateClickHouse(ch: ClickHouse, contacts: number, events: number, now: number, log: (m: string) => void): Promise<void> {
  const started = Date.now();
  await writeAudienceContacts(ch, contacts, now, true);
  // One source contact per audience contact, a second one (another data source) for 10%.
  await ch.command(sql`
    INSERT INTO audience_membership (project_id, data_source_id, user_id, audience_id, version, deleted)
    SELECT ${PROJECT}, 'ds1', concat('u', toString(number)), concat('a', toString(number)), 1, 0 FROM numbers(${contacts})`);
  await ch.command(sql`
    INSERT INTO audience_membership (project_id, data_source_id, user_id, audience_id, version, deleted)
    SELECT ${PROJECT}, 'ds2', concat('u', toString(number)), concat('a', toString(number)), 1, 0 FROM numbers(${contacts}) WHERE number % 10 = 0`);
  log(`contacts and memberships in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await writeEvents(ch, contacts, events, now, (done) => log(`events: ${done.toLocaleString('en-US')} in ${((Date.now() - started) / 1000).toFixed(1)} s`));
}


/** Same shape in Postgres: events already attached to audience ids (what a per-contact store holds). */
async function generatePostgres(pg: Client, contacts: number, events: number, now: number, log: (m: string) => void): Promise<void> {
  const started = Date.now();
  await pg.query(`DROP SCHEMA IF EXISTS ${DATABASE} CASCADE`);
  await pg.query(`CREATE SCHEMA ${DATABASE}`);
  // UNLOGGED: a scratch copy; reads are the same as for a logged table.
  await pg.query(`CREATE UNLOGGED TABLE ${DATABASE}.contacts (audience_id text PRIMARY KEY, deleted boolean NOT NULL)`);
  await pg.query(`INSERT INTO ${DATABASE}.contacts SELECT 'a' || i, i % 100 = 7 FROM generate_series(0, $1::int - 1) i`, [contacts]);
  await pg.query(`CREATE UNLOGGED TABLE ${DATABASE}.contact_events (project_id text NOT NULL, audience_id text NOT NULL, event_id text NOT NULL, event_type text NOT NULL, event_date timestamptz NOT NULL, params jsonb NOT NULL)`);
  const types = `ARRAY[${EVENT_TYPES.map((t) => `'${t}'`).join(', ')}]`;
  const chunk = 1_000_000;
  for (let offset = 0; offset < events; offset += chunk) {
    await pg.query(
      `INSERT INTO ${DATABASE}.contact_events
       SELECT $1, 'a' || (abs(hashint8(i)) % $2), md5(i::text), t, to_timestamp($3 - abs(hashint8(i + 1000000007)) % ${365 * DAY}),
              CASE WHEN t = 'purchase' THEN jsonb_build_object('amount', abs(hashint8(i + 3)) % 500, 'product-id', 'SKU-' || abs(hashint8(i + 5)) % 1000)
                   ELSE jsonb_build_object('url', '/p/' || i % 997) END
       FROM (SELECT i, (${types})[abs(hashint8(i + 2)) % ${EVENT_TYPES.length} + 1] AS t FROM generate_series($4::bigint, $5::bigint) i) s`,
      [PROJECT, contacts, now, offset, Math.min(offset + chunk, events) - 1],
    );
    log(`postgres events: ${Math.min(offset + chunk, events).toLocaleString('en-US')} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  await pg.query(`CREATE INDEX ON ${DATABASE}.contact_events (project_id, event_type, event_date) INCLUDE (audience_id)`);
  await pg.query(`ANALYZE ${DATABASE}.contacts`);
  await pg.query(`ANALYZE ${DATABASE}.contact_events`);
  log(`postgres ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function pidOf(root: string, name: string): WatchedProcess[] {
  const file = join(root, `.stack/pids/${name}.pid`);
  const pid = existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : Number.NaN;
  return Number.isInteger(pid) ? [{ name, pid }] : [];
}

const count = async (ch: ClickHouse, query: Sql): Promise<number> => Number((await ch.query<{ n: string }>(query))[0]?.n ?? Number.NaN);

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const contacts = ctx.args.int('contacts', 1_000_000);
  const events = ctx.args.int('events', 10_000_000);
  const reps = ctx.args.int('reps', 30);
  const warmup = ctx.args.int('warmup', 3);
  const pgEventsArg = ctx.args.string('pg-events');
  const pgEvents = pgEventsArg === undefined ? events : Number(pgEventsArg);
  const keep = ctx.args.flag('keep');
  const url = process.env.MELD_CLICKHOUSE_URL;
  const pgUrl = process.env.MELD_POSTGRES_URL;
  if (!url || (pgEvents > 0 && !pgUrl)) throw new Error('MELD_CLICKHOUSE_URL / MELD_POSTGRES_URL not set: run through `npm run bench -- audience-count` with the stack up');
  const load = [loadavg()[0]];

  const ch = createClickHouse({ url, database: DATABASE, requestTimeoutMs: 900_000 });
  const pg = pgEvents > 0 ? new Client({ connectionString: pgUrl }) : undefined;
  try {
    await ch.ensureDatabase();
    await migrateClickHouse({ client: ch });
    await ch.command(sql`CREATE TABLE IF NOT EXISTS bench_meta (contacts UInt64, events UInt64, pg_events UInt64, now UInt32) ENGINE = TinyLog`);
    const [meta] = await ch.query<{ contacts: string; events: string; pg_events: string; now: number }>(sql`SELECT * FROM bench_meta`);
    const reuse = ctx.args.flag('reuse') && meta && Number(meta.contacts) === contacts && Number(meta.events) === events && Number(meta.pg_events) === pgEvents;
    const now = reuse ? Number(meta.now) : Math.floor(Date.now() / 1000);
    if (pg) await pg.connect();
    // The snapshot's noise must stay unmerged while the counts are timed: no merge collapses a
    // stale state with its cancellation (in memory on the server; lasts until START MERGES or a restart).
    await ch.command(sql`SYSTEM STOP MERGES ${ident(DATABASE, 'audience_snapshot')}`);
    if (!reuse) {
      for (const table of ['audience_contacts', 'audience_snapshot', 'audience_membership', 'events', 'bench_meta']) await ch.command(sql`TRUNCATE TABLE ${raw(table)}`);
      await generateClickHouse(ch, contacts, events, now, ctx.log);
      if (pg) await generatePostgres(pg, contacts, pgEvents, now, ctx.log);
      await ch.command(sql`INSERT INTO bench_meta VALUES (${contacts}, ${events}, ${pgEvents}, ${now})`);
    } else ctx.log('reusing the data of an earlier --keep run');
    // 10M fresh event rows keep a core merging for a while: time the counts after that.
    ctx.log(await settleStores({ clickhouse: { ch, database: DATABASE } }, 300_000));
    const parts = await ch.query<{ table: string; parts: string }>(sql`SELECT table, toString(count()) AS parts FROM system.parts WHERE database = ${DATABASE} AND active GROUP BY table ORDER BY table`);
    // Every −1 the data holds (5% stale states, 1% deleted ones) still in the table: nothing collapsed.
    const cancellations = snapshotCancellations(contacts);
    const unmerged = async (when: string) => {
      const n = await count(ch, sql`SELECT count() AS n FROM audience_snapshot WHERE project_id = ${PROJECT} AND sign = -1`);
      if (n !== cancellations) throw new Error(`${when}: ${n} −1 rows in audience_snapshot, ${cancellations} written: merges collapsed the noise (rerun without --reuse)`);
    };
    await unmerged('before timing');

    // The three filters, as a client sends them, and the SQL one would write by hand for them
    // knowing the data (single-valued attributes by their slot column, parameters by their JSON text).
    const P = sql`project_id = ${PROJECT}`;
    const contactsFinal = sql`FROM audience_contacts FINAL WHERE ${P} AND deleted = 0`;
    const snapshot = sql`FROM audience_snapshot WHERE ${P} AND deleted = 0`;
    const slotOf = (k: string) => CATALOGUE.attributes.find((a) => a.uid === k)!.slot!;
    const str = (k: string) => sql`lowerUTF8(${raw(`s${slotOf(k)}`)})`;
    const num = (k: string) => raw(`n${slotOf(k)}`);
    const from = now - 30 * DAY;
    // `condition` is the hand-written WHERE part, timed on the collapsing snapshot (sum(sign), the
    // baseline), in two hash-range branches, and as it was on audience_contacts FINAL.
    const cases: Array<{ id: string; label: string; filter: unknown; condition: Sql; postgres?: { text: string; values: unknown[] } }> = [
      {
        id: 'a',
        label: '(a) one attribute condition',
        filter: { type: 'attribute_condition', key: 'city', operator: 'matches-string', values: ['Paris'] },
        condition: sql`${str('city')} = 'paris'`,
      },
      {
        id: 'b',
        label: '(b) and/or of four conditions',
        filter: {
          type: 'group',
          operator: 'and',
          children: [
            { type: 'group', operator: 'or', children: [{ type: 'attribute_condition', key: 'city', operator: 'matches-string', values: ['Paris', 'Lyon'] }, { type: 'attribute_condition', key: 'plan', operator: 'matches-string', values: ['pro'] }] },
            { type: 'attribute_condition', key: 'score', operator: 'greater-than', values: [500] },
            { type: 'attribute_condition', key: 'vip', operator: 'is-true', values: [] },
          ],
        },
        condition: sql`(${str('city')} IN ('paris', 'lyon') OR ${str('plan')} = 'pro') AND ${num('score')} > 500 AND ${num('vip')} = 1`,
      },
      {
        id: 'c',
        label: '(c) group_event, parameter condition, 30 days',
        filter: { type: 'group_event', eventType: 'purchase', timeframe: { lastDays: 30 }, children: [{ type: 'event_condition', key: 'purchase.product-id', operator: 'matches-string', values: SKUS }] },
        condition: sql`audience_id IN (
          SELECT audience_id FROM audience_membership FINAL WHERE ${P} AND deleted = 0 AND (data_source_id, user_id) IN (
            SELECT data_source_id, user_id FROM events
            WHERE ${P} AND event_type = 'purchase' AND event_date >= toDateTime(${from}) AND event_date <= toDateTime(${now})
              AND param_values[indexOf(param_keys, 'product-id')] IN (${sqlJoin(SKUS.map((s) => JSON.stringify(s)))})))`,
        postgres: {
          text: `SELECT count(*) AS n FROM ${DATABASE}.contacts c WHERE NOT c.deleted AND c.audience_id IN (
                   SELECT e.audience_id FROM ${DATABASE}.contact_events e
                   WHERE e.project_id = $1 AND e.event_type = 'purchase' AND e.event_date >= to_timestamp($2) AND e.event_date <= to_timestamp($3)
                     AND lower(e.params->>'product-id') = ANY($4))`,
          values: [PROJECT, from, now, SKUS.map((s) => s.toLowerCase())],
        },
      },
    ];

    const variants: Variant[] = [];
    const counts = new Map<string, number>();
    const at = new Date(now * 1000);
    const half = 2n ** 63n;
    for (const c of cases) {
      const root: AudienceFilterNode = parseAudienceFilter(c.filter, CATALOGUE);
      const hand = `${c.label}: hand-written SQL`;
      variants.push({ name: hand, run: () => count(ch, sql`SELECT sum(sign) AS n ${snapshot} AND ${c.condition}`) });
      variants.push({ name: `${c.label}: hand-written, FINAL (before)`, baseline: hand, run: () => count(ch, sql`SELECT count() AS n ${contactsFinal} AND ${c.condition}`) });
      const compiled = audienceCount({ projectId: PROJECT, root, counts: [['n']], now: at });
      variants.push({ name: `${c.label}: compiled filter`, baseline: hand, run: () => count(ch, compiled) });
      // What a probe with a root reads: one row per current contact (liveSnapshot).
      const rows = audienceSelect({ projectId: PROJECT, root, columns: sql`count() AS n`, now: at });
      variants.push({ name: `${c.label}: compiled, current rows`, baseline: hand, run: () => count(ch, rows) });
      if (c.id !== 'c') {
        // Do hash-range branches (ADR 0061, for FINAL) still pay off on a plain scan?
        const branches = sql`SELECT sum(s) AS n FROM (SELECT sum(sign) AS s ${snapshot} AND audience_hash < ${half} AND ${c.condition} UNION ALL SELECT sum(sign) AS s ${snapshot} AND audience_hash >= ${half} AND ${c.condition})`;
        variants.push({ name: `${c.label}: hand-written, two hash-range branches`, baseline: hand, run: () => count(ch, branches) });
        // The same filter for attributes without a slot (the key/value arrays: before migration 0005).
        const arrays = audienceCount({ projectId: PROJECT, root: parseAudienceFilter(c.filter, ARRAYS_ONLY), counts: [['n']], now: at });
        variants.push({ name: `${c.label}: compiled, no slot columns`, baseline: hand, run: () => count(ch, arrays) });
      }
      if (c.postgres && pg) {
        const q = c.postgres;
        variants.push({ name: `${c.label}: Postgres per-contact events`, baseline: hand, run: async () => Number((await pg.query<{ n: string }>(q.text, q.values)).rows[0].n) });
      }
    }

    const processes: WatchedProcess[] = [{ name: 'bench', pid: process.pid }, ...pidOf(ctx.root, 'clickhouse'), ...(pg ? pidOf(ctx.root, 'postgres') : [])];
    const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    const rss = new Map<string, Record<string, number>>();
    for (let round = -warmup; round < reps; round++) {
      // Interleaved, rotating which variant goes first, so drift on a shared machine hits all alike.
      const shift = ((round % variants.length) + variants.length) % variants.length;
      for (const v of [...variants.slice(shift), ...variants.slice(0, shift)]) {
        const sampler = new RssSampler(processes).start();
        const t0 = performance.now();
        const n = await v.run();
        const ms = performance.now() - t0;
        const peaks = sampler.stop();
        if (round < 0) {
          counts.set(v.name, n);
          continue;
        }
        if (counts.get(v.name) !== n) throw new Error(`${v.name}: count changed between runs (${counts.get(v.name)} then ${n})`);
        times.get(v.name)!.push(ms);
        const prev = rss.get(v.name) ?? {};
        rss.set(v.name, Object.fromEntries(Object.entries(peaks).map(([k, mb]) => [k, Math.max(prev[k] ?? 0, mb)])));
      }
      if (round >= 0 && (round + 1) % 10 === 0) ctx.log(`round ${round + 1}/${reps}`);
    }
    load.push(loadavg()[0]);
    await unmerged('after timing');

    const rows: BenchRow[] = variants.map((v) => {
      const t = times.get(v.name)!;
      return { name: v.name, throughput: 1000 / median(t), p50Ms: median(t), p99Ms: percentile(t, 99), peakRssMb: rss.get(v.name) ?? {}, baseline: v.baseline, runs: t.length };
    });
    const byName = new Map(rows.map((r) => [r.name, r]));
    const goal = (c: (typeof cases)[number], p99: number) => {
      const compiled = byName.get(`${c.label}: compiled filter`)!;
      const hand = byName.get(`${c.label}: hand-written SQL`)!;
      const ratio = compiled.p50Ms / hand.p50Ms;
      return `${c.label}: compiled p50 ${compiled.p50Ms.toFixed(0)} ms = ${ratio.toFixed(2)}× hand-written (goal ≤ 1.5×: ${ratio <= 1.5 ? 'MET' : 'MISSED'}); p99 ${compiled.p99Ms.toFixed(0)} ms (goal ≤ ${p99} ms: ${compiled.p99Ms <= p99 ? 'MET' : 'MISSED'})`;
    };
    // Every ClickHouse read of a case counts the same contacts (the Postgres copy is other data).
    const mismatches = cases.filter((c) => new Set(variants.filter((v) => v.name.startsWith(`${c.label}: `) && !v.name.includes('Postgres')).map((v) => counts.get(v.name))).size !== 1);
    if (mismatches.length) throw new Error(`counts differ between the reads of: ${mismatches.map((c) => c.label).join(', ')}`);
    return {
      title: `audience-count: count on ${contacts.toLocaleString('en-US')} contacts and ${events.toLocaleString('en-US')} events, compiled filter vs hand-written SQL (${reps} interleaved rounds)`,
      units: { throughput: 'queries/s, from the p50', latency: 'one count query, client side (p99 of 30 runs is their maximum)' },
      rows,
      notes: [
        goal(cases[0], 300),
        goal(cases[1], 300),
        goal(cases[2], 1000),
        `fastest run (the least disturbed by other work on a shared machine): ${variants.map((v) => `${v.name.replace(/^\((\w)\)[^:]*: /, '$1 ')} ${Math.min(...times.get(v.name)!).toFixed(0)} ms`).join('; ')}`,
        `counts: ${cases.map((c) => `${c.id} ${counts.get(`${c.label}: compiled filter`)}${c.postgres && pg ? ` (Postgres data: ${counts.get(`${c.label}: Postgres per-contact events`)})` : ''}`).join(', ')} (every ClickHouse read of a case gave the same count)`,
        `ClickHouse active parts: ${parts.map((p) => `${p.table} ${p.parts}`).join(', ')}; snapshot noise: 5% stale versions, 1% tombstones (audience_snapshot: ${cancellations.toLocaleString('en-US')} −1 rows, merges stopped, checked unmerged before and after timing); events over 365 days, 10 types, 1 in 11 on a second data source`,
        pg
          ? `Postgres: ${pgEvents.toLocaleString('en-US')} events in a per-contact table (audience ids already resolved) with a btree on (project_id, event_type, event_date) INCLUDE (audience_id); it answers the event part only, a filter mixing attributes would still need the ClickHouse snapshot`
          : 'Postgres alternative skipped (--pg-events 0)',
        `load average (1 min) at start ${load[0].toFixed(1)}, at end ${load[1].toFixed(1)} on ${cpus().length} cores shared with other work`,
      ],
      goals: cases.map((c) => ({ row: `${c.label}: compiled filter`, minRatio: 1 / 1.5 })),
    };
  } finally {
    if (!keep) {
      await ch.command(sql`DROP DATABASE IF EXISTS ${ident(DATABASE)}`).catch(() => undefined);
      await pg?.query(`DROP SCHEMA IF EXISTS ${DATABASE} CASCADE`).catch(() => undefined);
    }
    await ch.close();
    await pg?.end().catch(() => undefined);
  }
}

/**
 * probes: POST /audience/coverage and POST /event/volumes through the gateway, on --contacts
 * audience contacts with --attributes attributes (skewed, uniform, multivalue, sparse and number
 * shapes, bench/lib/probes-data.ts) and --events events of --types declared types, beside the
 * hand-written ClickHouse queries that compute the same figures, timed in the same run (rounds
 * alternate the order). Cold calls clear the project's probe cache first (the refresh throttle
 * allows one recomputation per five minutes); cached calls are a closed loop of --seconds. The
 * first cold coverage answer is checked against the exact truth (issue 15's accuracy figures).
 * The bench starts its own gateway and probes (`npm run build` first) on a Postgres database, a
 * ClickHouse database (`meld_bench_probes`) and a private Kafka broker of its own, the databases
 * dropped at the end unless --keep.
 *
 * Options: --contacts N (1,000,000), --events N (10,000,000), --attributes N (30), --types N (20),
 * --rounds R (20 cold calls of each), --seconds S (5, the cached loop), --days D (30, the events' spread),
 * --keep (leave the generated databases for a rerun), --reuse (start from a --keep run's data when its
 * sizes match: ADR 0248).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import Redis from 'ioredis';
import { Pool } from 'undici';
import { generatePrincipalKeys } from '../../libs/auth/src';
import { allTopicNames } from '../../libs/contracts/src';
import { freePort, startApp, startScript, stopApp, waitReady } from '../lib/apps';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { closedLoop, type LoopResult } from '../lib/load';
import { startPrivateKafka } from '../lib/private-kafka';
import { accuracyNotes, accuracyOf, type CoverageAnswer, type EventAnswer, eventAccuracyNotes, eventAccuracyOf, exactEventTruth, exactTruth } from '../lib/probes-accuracy';
import { type BenchAttribute, benchAttributes, declareAttributes, declareEventTypes, eventTypeUids, PROBED_EVENT, seedContacts, seedEvents, withSlots } from '../lib/probes-data';
import { type PlainAttribute, plainCoverage, plainVolumes } from '../lib/probes-plain';
import { openProbesStores } from '../lib/probes-store';
import { settleStores } from '../lib/settle';
import { median, percentile } from '../lib/stats';

interface Variant {
  name: string;
  baseline?: string;
  run(): Promise<unknown>;
}

const timed = async (f: () => Promise<unknown>): Promise<number> => {
  const t0 = process.hrtime.bigint();
  await f();
  return Number(process.hrtime.bigint() - t0) / 1e6;
};

const CACHED_ROUNDS = 3;
const BARE_CACHED = 'coverage cached: bare Fastify, same JSON from Redis';

/** One row of alternating closed loops, their latencies pooled. */
function cachedRow(name: string, loops: readonly LoopResult[], baseline?: string): BenchRow {
  const latencies = loops.flatMap((l) => l.latencies);
  const elapsed = loops.reduce((s, l) => s + l.elapsedS, 0);
  return { name, throughput: latencies.length / elapsed, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), peakRssMb: {}, baseline, runs: latencies.length };
}

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const contacts = ctx.args.int('contacts', 1_000_000);
  const events = ctx.args.int('events', 10_000_000);
  const attributeCount = ctx.args.int('attributes', 30);
  const typeCount = ctx.args.int('types', 20);
  const rounds = ctx.args.int('rounds', 20);
  const seconds = ctx.args.int('seconds', 5);
  const days = ctx.args.int('days', 30);
  const { MELD_POSTGRES_URL: pgUrl, MELD_CLICKHOUSE_URL: chUrl, MELD_REDIS_URL: redisUrl } = process.env;
  if (!pgUrl || !chUrl || !redisUrl) throw new Error('MELD_POSTGRES_URL / MELD_CLICKHOUSE_URL / MELD_REDIS_URL not set: run through `npm run bench -- probes` with the stack up');
  const load = [loadavg()[0]];

  const keep = ctx.args.flag('keep');
  const suffix = randomBytes(4).toString('hex');
  const sizes = { contacts, events, attributes: attributeCount, types: typeCount, days };
  const stores = await openProbesStores({ pg: pgUrl, ch: chUrl }, sizes, ctx.args.flag('reuse'));
  const { pg, store, tenant, now } = stores;
  const database = store.database;
  const kafka = await startPrivateKafka(ctx.root, allTopicNames(), 1, ctx.log);
  const redis = new Redis(redisUrl, { lazyConnect: true });
  const children: ChildProcess[] = [];
  try {
    const projectId = tenant.project.id;
    const dataSourceId = tenant.dataSources[0].id;
    const t0 = Date.now();
    let attributes: BenchAttribute[];
    let types: string[];
    if (stores.reused) {
      attributes = await withSlots(pg.db, projectId, benchAttributes(attributeCount));
      types = eventTypeUids(typeCount);
      ctx.log(`reusing the data of an earlier --keep run (generated ${new Date(now * 1000).toISOString()})`);
    } else {
      attributes = await declareAttributes(pg.db, projectId, benchAttributes(attributeCount));
      types = await declareEventTypes(pg.db, projectId, typeCount);
      await seedContacts(store.ch, projectId, dataSourceId, attributes, contacts, now);
      ctx.log(`${contacts.toLocaleString('en-US')} contacts (${attributes.filter((a) => a.slot !== null).length} of ${attributes.length} attributes in slot columns) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      await seedEvents(store.ch, projectId, dataSourceId, types, contacts, events, now, days, ctx.log);
      await stores.complete();
    }
    ctx.log(await settleStores({ clickhouse: { ch: store.ch, database } }, 300_000));
    const truth = await exactTruth(store.ch, projectId);

    const keys = generatePrincipalKeys(['probes']);
    const [gatewayPort, probesPort] = [await freePort(), await freePort()];
    const probesUrl = `http://127.0.0.1:${probesPort}`;
    const common = { ...process.env, LOG_LEVEL: 'warn', ...keys, MELD_POSTGRES_URL: pg.url };
    children.push(
      startApp(ctx.root, 'probes', {
        ...common,
        PORT: String(probesPort),
        MELD_CLICKHOUSE_DB: database,
        MELD_KAFKA_BROKERS: kafka.brokers.join(','),
        MELD_PROBES_EVENTS_GROUP: `bench-events-${suffix}`,
        MELD_PROBES_AUDIENCE_GROUP: `bench-audience-${suffix}`,
      }),
      startApp(ctx.root, 'gateway', {
        ...common,
        MELD_PORT: String(gatewayPort),
        MELD_OPS_PORT: '0',
        MELD_PROBES_URL: probesUrl,
        MELD_RATE_LIMITS: JSON.stringify({ standard: { limit: 1_000_000_000 }, probes: { limit: 1_000_000_000 } }),
        MELD_RATE_LIMIT_NAMESPACE: `bench-${suffix}`,
      }),
    );
    await Promise.all([waitReady(`${probesUrl}/readyz`), waitReady(`http://127.0.0.1:${gatewayPort}/readyz`)]);
    await redis.connect();

    const gateway = new Pool(`http://127.0.0.1:${gatewayPort}`, { connections: 1, keepAliveTimeout: 60_000 });
    const post = async <T = Record<string, unknown>>(surface: string, body: object): Promise<{ metadata: T & { cached: boolean } }> => {
      const res = await gateway.request({
        method: 'POST',
        path: `/v1/project/${tenant.project.uid}/${surface}`,
        headers: { authorization: `Bearer ${tenant.productToken}`, 'content-type': 'application/json', 'x-request-id': randomUUID() },
        body: JSON.stringify(body),
        headersTimeout: 120_000,
        bodyTimeout: 120_000,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${surface}: ${res.statusCode} ${text.slice(0, 300)}`);
      return JSON.parse(text);
    };
    // Only this run's project: its keys carry the project id (apps/probes ProbeCache).
    const scanKeys = async (pattern: string) => {
      const found: string[] = [];
      for (let cursor = '0', first = true; first || cursor !== '0'; first = false) {
        const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        found.push(...batch);
      }
      return found;
    };
    const clearCache = async () => {
      const found = await scanKeys(`meld:probes:*${projectId}*`);
      if (found.length) await redis.del(...found);
    };
    const cold = <T = Record<string, unknown>>(surface: string, body: object) => async () => {
      await clearCache();
      const answer = await post<T>(surface, body);
      if (answer.metadata.cached) throw new Error(`${surface}: a cold call answered from the cache`);
      return answer;
    };

    const coverageFirst = await cold<CoverageAnswer>('audience/coverage', {})();
    const accuracy = accuracyOf(coverageFirst.metadata, truth);
    const volumesFirst = await cold<{ window: { from: string; to: string; days: number }; eventTypes: Array<{ uid: string; count: number }> }>('event/volumes', {})();
    const window = { from: Math.floor(Date.parse(volumesFirst.metadata.window.from) / 1000), to: Math.floor(Date.parse(volumesFirst.metadata.window.to) / 1000) };
    // Its accuracy is a note, not a reason to lose the timings: a first call over the gateway's 30 s is reported as such.
    const firstEvent = Date.now();
    const eventFirst = await cold<EventAnswer>('event/volumes', { event: PROBED_EVENT })().catch((e: Error) => {
      if (!/: 504 /.test(e.message)) throw e;
      return undefined;
    });
    ctx.log(`first cold call with event "${PROBED_EVENT}": ${eventFirst ? `${Date.now() - firstEvent} ms` : 'timed out at the gateway'}`);
    const eventAccuracy = eventFirst && eventAccuracyOf(eventFirst.metadata, await exactEventTruth(store.ch, projectId, PROBED_EVENT, eventFirst.metadata));
    const plainCounts = await plainVolumes(store.ch, { projectId, types, ...window }).counts();
    const mismatched = volumesFirst.metadata.eventTypes.filter((t) => (plainCounts.get(t.uid) ?? 0) !== t.count);
    if (mismatched.length) throw new Error(`event volumes differ from the plain query for ${mismatched.map((t) => t.uid).join(', ')}`);

    // The attributes a coverage call without `attributes` profiles (probe rule 4): the bench's and the project's visible reserved ones.
    const profiled: PlainAttribute[] = await pg.db.query(`SELECT uid, type, multivalue, slot FROM attributes WHERE project_id = $1 AND enabled AND visible AND NOT internal AND NOT "unique" ORDER BY created_at, uid`, [projectId]);
    const coverageSql = plainCoverage(store.ch, { projectId, attributes: profiled, contacts: truth.contacts });
    const volumesSql = plainVolumes(store.ch, { projectId, types, ...window, probed: PROBED_EVENT });
    const variants: Variant[] = [
      { name: 'coverage: plain ClickHouse queries', run: coverageSql.run },
      { name: 'coverage cold (cache cleared), gateway', baseline: 'coverage: plain ClickHouse queries', run: cold('audience/coverage', {}) },
      { name: 'volumes: plain ClickHouse queries', run: volumesSql.counts },
      { name: 'volumes cold, gateway', baseline: 'volumes: plain ClickHouse queries', run: cold('event/volumes', {}) },
      { name: `volumes + event: plain ClickHouse queries`, run: volumesSql.withEvent },
      { name: `volumes cold with event "${PROBED_EVENT}", gateway`, baseline: 'volumes + event: plain ClickHouse queries', run: cold('event/volumes', { event: PROBED_EVENT }) },
    ];
    const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    // On a loaded shared machine a cold call can outlast the gateway's 30 s upstream timeout: kept as
    // a figure (its elapsed time, at least 30 s) and counted, instead of ending the run.
    const timeouts = new Map<string, number>();
    const tolerant = (v: Variant) => () =>
      v.run().catch((e: Error) => {
        if (!/: 504 /.test(e.message)) throw e;
        timeouts.set(v.name, (timeouts.get(v.name) ?? 0) + 1);
      });
    for (let round = 0; round < rounds; round++) {
      for (const v of round % 2 === 0 ? variants : [...variants].reverse()) times.get(v.name)!.push(await timed(tolerant(v)));
      ctx.log(`round ${round + 1}/${rounds}: ${variants.map((v) => `${v.name.split(',')[0]} ${times.get(v.name)!.at(-1)!.toFixed(0)} ms`).join('; ')}`);
    }
    // The cached figure beside its floor (ADR 0248): a bare Fastify answering the same stored JSON
    // from Redis, in alternating loops so both see the same moments of the machine's load.
    await post('audience/coverage', {});
    const cacheKey = (await scanKeys(`meld:probes:coverage:${projectId}:*`)).find((k) => !k.endsWith(':lock'));
    if (!cacheKey) throw new Error('no cached coverage answer in Redis after a call');
    const barePort = await freePort();
    children.push(
      startScript(ctx.root, 'bench/lib/probes-bare-cache.ts', { ...process.env, PORT: String(barePort), BARE_CACHE_KEY: cacheKey }),
    );
    await waitReady(`http://127.0.0.1:${barePort}/readyz`);
    const bare = new Pool(`http://127.0.0.1:${barePort}`, { connections: 1, keepAliveTimeout: 60_000 });
    const bareCall = async () => {
      const res = await bare.request({ method: 'POST', path: `/v1/project/${tenant.project.uid}/audience/coverage`, headers: { 'content-type': 'application/json' }, body: '{}' });
      const text = await res.body.text();
      return res.statusCode === 200 && text.length > 0;
    };
    const cachedLoops = { bare: [] as LoopResult[], gateway: [] as LoopResult[] };
    for (let round = 0; round < CACHED_ROUNDS; round++) {
      cachedLoops.bare.push(await closedLoop(1, seconds, 1, bareCall));
      cachedLoops.gateway.push(await closedLoop(1, seconds, 1, async () => (await post('audience/coverage', {})).metadata.cached));
    }
    await Promise.all([gateway.close(), bare.close()]);
    load.push(loadavg()[0]);

    const rows: BenchRow[] = variants.map((v) => ({ name: v.name, throughput: 1000 / median(times.get(v.name)!), p50Ms: median(times.get(v.name)!), p99Ms: percentile(times.get(v.name)!, 99), peakRssMb: {}, baseline: v.baseline, runs: rounds }));
    const bareRow = cachedRow(BARE_CACHED, cachedLoops.bare);
    const gatewayRow = cachedRow('coverage cached, gateway', cachedLoops.gateway, BARE_CACHED);
    rows.push(bareRow, gatewayRow);
    const row = (name: string) => rows.find((r) => r.name === name)!;
    const goal = (name: string) => {
      const r = row(name);
      const base = row(r.baseline!);
      return `${name}: p99 ${r.p99Ms.toFixed(0)} ms (goal ≤ 1000 ${r.p99Ms <= 1000 ? 'MET' : 'MISSED'}), p50 ${(r.p50Ms / base.p50Ms).toFixed(2)}× the plain queries (goal ≤ 1.5 ${r.p50Ms / base.p50Ms <= 1.5 ? 'MET' : 'MISSED'})`;
    };
    const cachedP99 = row('coverage cached, gateway').p99Ms;
    return {
      title: `probes: ${contacts.toLocaleString('en-US')} contacts × ${attributeCount} attributes, ${events.toLocaleString('en-US')} events × ${typeCount} types; probes through the gateway vs plain ClickHouse queries (${rounds} interleaved cold rounds, ${seconds} s cached)`,
      units: { throughput: 'answers/s, from the p50', latency: `one answer, client side (p99 of ${rounds} cold calls is their maximum)` },
      rows,
      notes: [
        ...variants.filter((v) => v.baseline).map((v) => goal(v.name)),
        ...[...timeouts].map(([name, n]) => `${name}: ${n} of ${rounds} calls timed out at the gateway (30 s), counted at their elapsed time`),
        `coverage cached p99 ${cachedP99.toFixed(2)} ms (goal ≤ 20 ${cachedP99 <= 20 ? 'MET' : 'MISSED'}), ${cachedLoops.gateway.reduce((n, l) => n + l.errors, 0)} answers not from the cache; the floor (the same ${(await redis.strlen(cacheKey)).toLocaleString('en-US')}-byte JSON from Redis by a bare Fastify) p99 ${bareRow.p99Ms.toFixed(2)} ms, p50 ${bareRow.p50Ms.toFixed(2)} ms (${CACHED_ROUNDS} alternating loops of ${seconds} s each)`,
        ...accuracyNotes(accuracy),
        ...(eventAccuracy ? eventAccuracyNotes(PROBED_EVENT, eventAccuracy) : [`event "${PROBED_EVENT}" parameter values: accuracy not measured (the first cold call timed out at the gateway)`]),
        `coverage: ${coverageFirst.metadata.attributes.length} attributes profiled (the bench's and the project's visible reserved ones), sampling ${JSON.stringify(coverageFirst.metadata.sampling)}`,
        `volumes: window ${volumesFirst.metadata.window.days} days; per-type counts equal the plain query's for all ${types.length} types`,
        `load average (1 min) at start ${load[0].toFixed(1)}, at end ${load[1].toFixed(1)} on ${cpus().length} cores shared with other work`,
      ],
    };
  } finally {
    await Promise.all(children.map((c) => stopApp(c)));
    redis.disconnect();
    await kafka.stop();
    await stores.close(keep);
  }
}

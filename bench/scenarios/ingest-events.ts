/**
 * ingest-events (ADR 0093): `POST …/stream/events` through the gateway (token → rate limit →
 * ingest: validation, `event_ids` dedup, produce to meld.events.v1 with acks -1, COMMIT) and on
 * through the probes events sink into ClickHouse, vs a raw ClickHouse insert of the same rows in
 * the same run. Batches of --batch 100, --clients 16 concurrent clients.
 *
 * Per round (--rounds, medians printed):
 * 1. peak: --events N events (default 1,000,000) as fast as the clients get answers (closed
 *    loop). Accepted events/s = N / time to the last 202; end-to-end events/s = N / time until
 *    all N are visible in ClickHouse (count of the round's event-id range, checked with
 *    uniqExact at the end); batch p50/p99 under that load;
 * 2. the raw baseline: the same N rows inserted into a copy of the `events` table, batches of
 *    --batch, --clients at once.
 * Then once: half of peak, an open loop (a batch every 1/rate s whatever the answers; latency
 * from when the batch was due) at 50% of the median accepted peak for --half-seconds, and the
 * raw insert at that same rate, each once the stores finished the merges and autovacuum the
 * phase before left them (bench/lib/settle.ts; `events` and the raw table merged whole first):
 * the goal is about latency at half load, not in the wake of 2M rows just written.
 *
 * Everything runs on this machine: the bench starts its own gateway, ingest and probes from the
 * built apps (`npm run build`) on free ports, a private development broker (the contract
 * topics, --partitions each, default topics.json's), and a Postgres and a ClickHouse database
 * of its own (migrated, dropped at the end) on the stack's servers. CPU per event is the CPU
 * time of each process over the phase divided by its events (Postgres counts its backends).
 *
 * Options: --events N (1000000), --batch B (100), --clients C (16), --users U (1000),
 * --rounds R (1), --half-seconds S (20), --warmup S (2, half-peak only), --partitions K,
 * --half-rate E (events/s of the latency phase instead of half the measured peak: to compare
 * changes at one rate, or to iterate on the latency phase with a short peak run),
 * --profile DIR (V8 CPU profiles of the apps).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { Pool } from 'undici';
import { toEventRow } from '@meld/clickhouse';
import { sql } from '../../libs/clickhouse/src';
import { TOPIC_PARTITIONS, Topics, allTopicNames } from '../../libs/contracts/src';
import { benchClickHouse } from '../lib/clickhouse-db';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { CpuMeter, type MeteredProcess } from '../lib/cpu';
import { benchEvent } from '../lib/events';
import { closedLoopOver, openLoop, type LoopResult } from '../lib/load';
import { startMeldApps } from '../lib/meld-apps';
import { benchPostgres } from '../lib/postgres-db';
import { settleStores } from '../lib/settle';
import { overBound, scrapeMetrics } from '../lib/tail-metrics';
import { droppedMessages, startPrivateKafka } from '../lib/private-kafka';
import { RssSampler, stackPid, type WatchedProcess } from '../lib/processes';
import { formatNumber } from '../lib/table';
import { cpuBreakdown, perOp, phaseRow, requireEnv, type Phase } from '../lib/phase';
import { median, percentile } from '../lib/stats';
import { createBenchTenant } from '../lib/tenant';

interface Round {
  accepted: Phase;
  endToEnd: Phase;
  raw: Phase;
  /** Most events accepted but not yet visible at one time during the round. */
  maxLag: number;
}

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const events = ctx.args.int('events', 1_000_000);
  const batch = ctx.args.int('batch', 100);
  const clients = ctx.args.int('clients', 16);
  const users = ctx.args.int('users', 1000);
  const rounds = ctx.args.int('rounds', 1);
  const halfSeconds = ctx.args.int('half-seconds', 20);
  const warmup = ctx.args.int('warmup', 2);
  const partitions = ctx.args.int('partitions', TOPIC_PARTITIONS);
  const profileDir = ctx.args.string('profile');
  const halfRate = ctx.args.int('half-rate', 0);
  const env = requireEnv(['MELD_POSTGRES_URL', 'MELD_REDIS_URL', 'MELD_CLICKHOUSE_URL'], 'ingest-events');
  const loadBefore = loadavg();
  const suffix = randomBytes(4).toString('hex');
  const kafka = await startPrivateKafka(ctx.root, allTopicNames(), partitions, ctx.log);
  const pg = await benchPostgres(env.MELD_POSTGRES_URL, `meld_bench_${suffix}`);
  const store = await benchClickHouse(env.MELD_CLICKHOUSE_URL, `meld_bench_${suffix}`, clients);
  let pool: Pool | undefined;
  let apps: Awaited<ReturnType<typeof startMeldApps>> | undefined;
  try {
    const tenant = await createBenchTenant(pg.db, { name: `bench-ingest-${suffix}`, dataSources: 1, productScopes: [] });
    const [source] = tenant.dataSources;
    apps = await startMeldApps(
      ctx.root,
      ['ingest', 'probes', 'gateway'],
      { ...process.env, MELD_POSTGRES_URL: pg.url, MELD_CLICKHOUSE_DB: store.database, MELD_KAFKA_BROKERS: kafka.brokers.join(',') },
      {
        profileDir,
        perApp: {
          gateway: { MELD_RATE_LIMITS: JSON.stringify({ ingest: { limit: 1_000_000_000 } }), MELD_RATE_LIMIT_NAMESPACE: `bench-${suffix}` },
          probes: { MELD_PROBES_EVENTS_GROUP: `bench-events-${suffix}`, MELD_PROBES_AUDIENCE_GROUP: `bench-audience-${suffix}` },
        },
      },
    );
    const gatewayPool = new Pool(apps.urls.gateway, { connections: clients * 2, pipelining: 1, keepAliveTimeout: 30_000 });
    pool = gatewayPool;
    const path = `/v1/project/${tenant.project.uid}/datasource/${source.id}/stream`;
    const headers = { authorization: `Bearer ${source.token}`, 'content-type': 'application/json' };
    // Event-only items need a live contact: create the users first, through the same door.
    for (let start = 0; start < users; start += 100) {
      const body = JSON.stringify(Array.from({ length: Math.min(100, users - start) }, (_, i) => ({ _user_id: `user-${start + i}` })));
      const res = await gatewayPool.request({ method: 'POST', path: `${path}/contacts`, headers, body });
      if (res.statusCode !== 202) throw new Error(`creating contacts answered ${res.statusCode}: ${await res.body.text()}`);
      await res.body.dump();
    }

    const at = new Date().toISOString().slice(0, 19) + 'Z';
    const spec = (tag: string, n: number) => benchEvent({ projectId: tenant.project.id, dataSourceId: source.id, n, users, tag, at });
    const sendBatch = (tag: string, from: number, count: number) => async () => {
      const items = [];
      for (let n = from; n < from + count; n++) {
        const e = spec(tag, n);
        items.push({ _user_id: e.userId, _event_id: e.eventId, _event_type: e.eventType, _event_date: e.eventDate, _event_parameters: e.parameters });
      }
      const res = await gatewayPool.request({ method: 'POST', path: `${path}/events`, headers, body: JSON.stringify(items) });
      await res.body.dump();
      return res.statusCode === 202;
    };
    const rawTable = 'events_raw';
    await store.ch.command(`CREATE TABLE ${rawTable} AS events`);
    const rawBatch = (tag: string, from: number, count: number) => async () => {
      const rows = [];
      for (let n = from; n < from + count; n++) rows.push(toEventRow(spec(tag, n)));
      await store.ch.insert(rawTable, rows);
      return true;
    };

    const chPid = stackPid(ctx.root, 'clickhouse');
    // ClickHouse serves other sessions too (one process: its CPU here includes theirs).
    const stores: MeteredProcess[] = [{ name: 'postgres', pids: () => pg.backendPids() }, ...(chPid ? [{ name: 'clickhouse', pid: chPid }] : [])];
    const metered: MeteredProcess[] = [{ name: 'bench', pid: process.pid }, ...apps.processes, { name: 'kafka', pid: kafka.pid }, ...stores];
    const watched: WatchedProcess[] = [{ name: 'bench', pid: process.pid }, ...apps.processes, { name: 'kafka', pid: kafka.pid }];
    const batches = Math.ceil(events / batch);
    const batchSize = (b: number) => Math.min(batch, events - b * batch);
    ctx.log(`${rounds} round(s) of ${events} events: ${clients} clients × ${batch} per batch; ${users} contacts; broker ${partitions} partitions`);

    const results: Round[] = [];
    for (let round = 0; round < rounds; round++) {
      const tag = `${suffix}-r${round}`;
      const visible = async (uniq = false) => {
        const [r] = await store.ch.query<{ n: string }>(
          sql`SELECT ${uniq ? sql`uniqExact(event_id)` : sql`count()`} AS n FROM events WHERE project_id = ${tenant.project.id} AND event_id >= ${`${tag}-`} AND event_id < ${`${tag}.`}`,
        );
        return Number(r.n);
      };
      // Peak: the closed loop, with ClickHouse polled until every accepted event is visible.
      const cpu = await new CpuMeter(metered).start();
      const rss = new RssSampler(watched).start();
      const t0 = process.hrtime.bigint();
      let acceptedEvents = 0;
      let loadDone = false;
      let maxLag = 0;
      let acceptedCpu: Record<string, number> = {};
      const load = closedLoopOver(clients, batches, async (b) => {
        const ok = await sendBatch(tag, b * batch, batchSize(b))();
        if (ok) acceptedEvents += batchSize(b);
        return ok;
      }).then(async (r) => {
        loadDone = true;
        acceptedCpu = await cpu.stop();
        return r;
      });
      let seen = 0;
      let lastChange = Date.now();
      while (!loadDone || seen < acceptedEvents) {
        await new Promise((r) => setTimeout(r, 200));
        const n = await visible();
        maxLag = Math.max(maxLag, acceptedEvents - n);
        if (n !== seen) [seen, lastChange] = [n, Date.now()];
        if (loadDone && Date.now() - lastChange > 60_000) {
          const dropped = await droppedMessages(kafka.brokers, Topics.events);
          throw new Error(`only ${n} of ${acceptedEvents} accepted events visible after 60 s without progress (dev broker dropped ${dropped} messages)`);
        }
      }
      const endToEndS = Number(process.hrtime.bigint() - t0) / 1e9;
      const endToEndCpu = await cpu.stop();
      const rssMb = rss.stop();
      const peak: LoopResult = await load;
      const distinct = await visible(true);
      if (distinct < acceptedEvents) throw new Error(`ClickHouse holds ${distinct} distinct events of the ${acceptedEvents} accepted`);
      const accepted: Phase = {
        perS: acceptedEvents / peak.elapsedS,
        p50: percentile(peak.latencies, 50),
        p99: percentile(peak.latencies, 99),
        errors: peak.errors,
        cpu: perOp(acceptedCpu, acceptedEvents),
        rssMb,
      };
      const endToEnd: Phase = { perS: acceptedEvents / endToEndS, p50: Number.NaN, p99: Number.NaN, errors: peak.errors, cpu: perOp(endToEndCpu, acceptedEvents), rssMb };
      ctx.log(
        `round ${round + 1}: accepted ${accepted.perS.toFixed(0)} events/s (p50 ${accepted.p50.toFixed(1)} ms, p99 ${accepted.p99.toFixed(1)} ms), ` +
          `end-to-end ${endToEnd.perS.toFixed(0)} events/s, max lag ${maxLag} events`,
      );

      const rawCpu = await new CpuMeter(metered).start();
      const rawRss = new RssSampler(watched).start();
      const rawRun = await closedLoopOver(clients, batches, (b) => rawBatch(tag, b * batch, batchSize(b))());
      const raw: Phase = {
        perS: events / rawRun.elapsedS,
        p50: percentile(rawRun.latencies, 50),
        p99: percentile(rawRun.latencies, 99),
        errors: rawRun.errors,
        cpu: perOp(await rawCpu.stop(), events),
        rssMb: rawRss.stop(),
      };
      ctx.log(`round ${round + 1}: raw ClickHouse insert ${raw.perS.toFixed(0)} rows/s (p50 ${raw.p50.toFixed(1)} ms, p99 ${raw.p99.toFixed(1)} ms)`);
      results.push({ accepted, endToEnd, raw, maxLag });
    }

    // Half of peak: the same rate for both, so their latencies compare at equal load.
    const peakRate = median(results.map((r) => r.accepted.perS));
    const batchesPerS = (halfRate > 0 ? halfRate : peakRate * 0.5) / batch;
    let halfSeq = 0;
    const settled: string[] = [];
    const half = async (send: (tag: string, from: number, count: number) => () => Promise<boolean>, tag: string): Promise<Phase> => {
      settled.push(await settleStores({ clickhouse: { ch: store.ch, database: store.database, optimize: ['events', rawTable] }, postgres: pg.db }));
      ctx.log(settled[settled.length - 1]);
      const cpu = await new CpuMeter(metered).start();
      const rss = new RssSampler(watched).start();
      const r = await openLoop(batchesPerS, halfSeconds, warmup, () => send(tag, halfSeq++ * batch, batch)());
      const sent = r.sent * batch;
      return { perS: ((r.latencies.length - r.errors) * batch) / r.elapsedS, p50: percentile(r.latencies, 50), p99: percentile(r.latencies, 99), errors: r.errors, cpu: perOp(await cpu.stop(), sent), rssMb: rss.stop() };
    };
    ctx.log(`${halfRate > 0 ? 'latency phase (--half-rate)' : 'half of peak'}: ${(batchesPerS * batch).toFixed(0)} events/s (${batchesPerS.toFixed(1)} batches/s) for ${halfSeconds} s after ${warmup} s of warm-up`);
    const scrape = () => Promise.all(['gateway', 'ingest', 'probes'].map((a) => scrapeMetrics(apps!.urls[a])));
    const beforeHalf = await scrape();
    const halfIngest = await half(sendBatch, `${suffix}-half`);
    const afterHalf = await scrape();
    // Which layer the slow batches (> 50 ms; ingest's stages > 25 ms) of the half-peak phase were slow in.
    const tails = [
      ...overBound(beforeHalf[0], afterHalf[0], 'meld_http_request_duration_seconds', 'stream/events', 0.05).map((l) => `gateway ${l}`),
      ...overBound(beforeHalf[1], afterHalf[1], 'meld_http_request_duration_seconds', 'stream/events', 0.05).map((l) => `ingest ${l}`),
      ...overBound(beforeHalf[1], afterHalf[1], 'meld_ingest_event_write_stage_seconds', 'stage', 0.025).map((l) => `ingest stage ${l}`),
      ...['gateway', 'ingest', 'probes'].flatMap((a, i) => overBound(beforeHalf[i], afterHalf[i], 'nodejs_gc_duration_seconds', 'kind', 0.01).map((l) => `${a} GC ${l}`)),
    ];
    ctx.log(`half-peak tails: ${tails.join('; ')}`);
    ctx.log(`half of peak through the gateway: p50 ${halfIngest.p50.toFixed(1)} ms, p99 ${halfIngest.p99.toFixed(1)} ms`);
    halfSeq = 0;
    const halfRaw = await half(rawBatch, `${suffix}-half`);
    ctx.log(`half of peak raw insert: p50 ${halfRaw.p50.toFixed(1)} ms, p99 ${halfRaw.p99.toFixed(1)} ms`);

    const apiNames = ['gateway', 'ingest', 'postgres', 'kafka'];
    const all = ['gateway', 'ingest', 'probes', 'kafka', 'postgres', 'clickhouse'];
    const rawNames = ['bench', 'clickhouse'];
    const peakBaseline = 'raw ClickHouse insert (peak)';
    const rows: BenchRow[] = [
      phaseRow('accepted through gateway + ingest (peak)', results.map((r) => r.accepted), apiNames, peakBaseline),
      phaseRow('end to end: visible in ClickHouse (peak)', results.map((r) => r.endToEnd), all, peakBaseline),
      phaseRow(peakBaseline, results.map((r) => r.raw), rawNames),
      phaseRow('accepted at half of peak (open loop)', [halfIngest], apiNames, 'raw insert at the same rate'),
      phaseRow('raw insert at the same rate', [halfRaw], rawNames),
    ];
    const e2e = rows[1].throughput;
    const errors = results.reduce((n, r) => n + r.accepted.errors + r.raw.errors, halfIngest.errors + halfRaw.errors);
    const loadAfter = loadavg();
    return {
      title: `ingest-events: ${events} events, batches of ${batch}, ${clients} clients: through gateway → ingest → Kafka → probes → ClickHouse vs a raw ClickHouse insert`,
      units: {
        throughput: 'events/s',
        latency: 'one batch, client side (half of peak: from when the batch was due)',
        cpu: 'µs per event: gateway+ingest+postgres+kafka (accepted), every process of the path (end to end), bench+clickhouse (raw)',
      },
      rows,
      notes: [
        `goal end-to-end ≥ 20,000 events/s: ${formatNumber(e2e)} ${e2e >= 20_000 ? 'MET' : 'MISSED'}; goal p99 ≤ 50 ms at half of peak: ${formatNumber(halfIngest.p99)} ms ${halfRate > 0 ? `(at --half-rate ${halfRate}, not half of the peak: no verdict)` : halfIngest.p99 <= 50 ? 'MET' : 'MISSED'}`,
        `half-peak phase, slow observations by layer (apps' own histograms): ${tails.join('; ')}`,
        `half of peak = ${formatNumber(batchesPerS * batch)} events/s (${halfRate > 0 ? '--half-rate' : '50% of the median accepted peak'}); before each half-peak phase the stores finish the background work of the phase before: gateway phase ${settled[0]}, raw phase ${settled[1]}`,
        `most events accepted but not yet visible at once: ${results.map((r) => formatNumber(r.maxLag)).join(', ')} (the dev broker keeps ~12,000 of these events per partition; every accepted event was found in ClickHouse)`,
        cpuBreakdown('CPU µs/event by process, end to end (round 1)', results[0].endToEnd.cpu),
        cpuBreakdown('CPU µs/event by process, raw insert (round 1)', results[0].raw.cpu),
        cpuBreakdown('CPU µs/event by process, half of peak', halfIngest.cpu),
        `failed batches: ${errors}; clickhouse CPU is the whole server's (other sessions on the shared stack included), postgres counts the backends of the bench's database only`,
        `load average (1/5/15 min) before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after: ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`,
        'one machine (2 cores): bench clients, gateway, ingest, probes, Postgres, Redis, the Kafka dev broker and ClickHouse share it',
      ],
    };
  } finally {
    await pool?.close();
    await apps?.stop();
    await kafka.stop();
    await store.drop();
    await pg.drop();
  }
}

/**
 * events-sink: the probes events sink alone. --events N events (as ingest publishes them:
 * sends of --batch, --producers at once, which the producer groups into requests) are written
 * to a private development broker first; then the probes app (built, its own process) starts
 * with a new consumer group and drains them into a ClickHouse database of the bench's own.
 * Figure: events/s from the first row visible to the last (so the group join is not counted),
 * the probes CPU per event, vs a raw ClickHouse insert of the same rows in --raw-batch rows
 * per insert, in the same run. --rounds R repeats both (a new backlog, group and table each).
 *
 * This isolates the sink from ingest (the ingest-events scenario measures the whole path): the
 * drain rate is what the sink can do when it is the bottleneck.
 *
 * The backlog must fit the dev broker (5 MB per partition, ~9,500 of these events): hence 32
 * partitions by default (topics.json has 8; a fetch returns about as much either way, one
 * produce request's records per partition), and the run stops with an error if the broker
 * dropped some.
 *
 * Options: --events N (250000), --batch B (100), --producers P (16), --partitions K (32),
 * --raw-batch R (10000), --rounds R (1), --profile-probes DIR (V8 CPU profile of probes).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { generatePrincipalKeys } from '../../libs/auth/src';
import { setTimeout as sleep } from 'node:timers/promises';
import { toEventRow } from '@meld/clickhouse';
import { sql } from '../../libs/clickhouse/src';
import { Topics, allTopicNames } from '../../libs/contracts/src';
import { createProducer } from '../../libs/kafka/src';
import { freePort, startApp, stopApp, waitReady } from '../lib/apps';
import { benchClickHouse } from '../lib/clickhouse-db';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { processCpuUs, selfCpuUs } from '../lib/cpu';
import { benchEvent, benchEventMessage } from '../lib/events';
import { droppedMessages, startPrivateKafka } from '../lib/private-kafka';
import { RssSampler } from '../lib/processes';
import { pooled } from '../lib/pooled';
import { median } from '../lib/stats';

interface Drain {
  eventsPerS: number;
  cpuUsPerEvent: number;
  rssMb: Record<string, number>;
}

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const events = ctx.args.int('events', 250_000);
  const batch = ctx.args.int('batch', 100);
  const producers = ctx.args.int('producers', 16);
  const partitions = ctx.args.int('partitions', 32);
  const rawBatch = ctx.args.int('raw-batch', 10_000);
  const rounds = ctx.args.int('rounds', 1);
  const profileDir = ctx.args.string('profile-probes');
  const clickhouseUrl = process.env.MELD_CLICKHOUSE_URL;
  if (!clickhouseUrl || !process.env.MELD_REDIS_URL) throw new Error('MELD_CLICKHOUSE_URL / MELD_REDIS_URL not set: run through `meld bench events-sink` with the stack up');

  const suffix = randomBytes(4).toString('hex');
  const store = await benchClickHouse(clickhouseUrl, `meld_bench_${suffix}`);
  const projectId = randomUUID();
  const dataSourceId = randomUUID();
  const at = new Date().toISOString().slice(0, 19) + 'Z';
  const sink: Drain[] = [];
  const raw: Drain[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const tag = `${suffix}-${round}`;
      const spec = (n: number) => benchEvent({ projectId, dataSourceId, n, users: 1000, tag, at });
      sink.push(await drainThroughProbes(ctx, { store, spec, events, batch, producers, partitions, tag, profileDir }));
      ctx.log(`round ${round + 1} sink: ${sink[round].eventsPerS.toFixed(0)} events/s, ${sink[round].cpuUsPerEvent.toFixed(1)} µs probes CPU per event`);
      raw.push(await rawInsert(store.ch, `events_raw_${round}`, events, rawBatch, (n) => toEventRow(spec(n))));
      ctx.log(`round ${round + 1} raw: ${raw[round].eventsPerS.toFixed(0)} rows/s`);
    }
  } finally {
    await store.drop();
  }
  const row = (name: string, runs: Drain[], baseline?: string): BenchRow => ({
    name,
    throughput: median(runs.map((r) => r.eventsPerS)),
    p50Ms: Number.NaN,
    p99Ms: Number.NaN,
    cpuUsPerOp: median(runs.map((r) => r.cpuUsPerEvent)),
    peakRssMb: Object.fromEntries(Object.keys(runs[0].rssMb).map((k) => [k, Math.max(...runs.map((r) => r.rssMb[k]))])),
    baseline,
    runs: runs.length,
  });
  return {
    title: `events-sink: ${events} events from a Kafka backlog (${partitions} partitions, sent as ${producers} concurrent sends of ${batch}) into ClickHouse by probes vs raw inserts of ${rawBatch} rows`,
    units: { throughput: 'events/s', latency: 'not measured', cpu: 'probes process (sink) / bench process (raw) CPU per event' },
    rows: [row('probes events sink (Kafka → ClickHouse)', sink, 'raw ClickHouse insert'), row('raw ClickHouse insert', raw)],
    notes: ['sink throughput counts from the first row visible to the last (group join excluded)', 'one machine: broker, probes, ClickHouse and the bench share its cores'],
  };
}

async function drainThroughProbes(
  ctx: BenchContext,
  o: {
    store: Awaited<ReturnType<typeof benchClickHouse>>;
    spec: (n: number) => ReturnType<typeof benchEvent>;
    events: number;
    batch: number;
    producers: number;
    partitions: number;
    tag: string;
    profileDir?: string;
  },
): Promise<Drain> {
  const kafka = await startPrivateKafka(ctx.root, allTopicNames(), o.partitions, ctx.log);
  const producer = createProducer({ brokers: kafka.brokers, clientId: 'meld-bench' });
  try {
    await producer.connect();
    const started = Date.now();
    await pooled(Math.ceil(o.events / o.batch), o.producers, async (b) => {
      const from = b * o.batch;
      const messages = [];
      for (let n = from; n < Math.min(o.events, from + o.batch); n++) messages.push(benchEventMessage(o.spec(n)));
      await producer.send(Topics.events, messages);
    });
    ctx.log(`produced ${o.events} events in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await producer.disconnect();
    const dropped = await droppedMessages(kafka.brokers, Topics.events);
    if (dropped > 0) throw new Error(`the dev broker dropped ${dropped} of the ${o.events} events (5 MB per partition): use fewer --events or more --partitions`);

    const port = await freePort();
    const probes = startApp(
      ctx.root,
      'probes',
      {
        ...process.env,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        ...generatePrincipalKeys(['probes']),
        MELD_KAFKA_BROKERS: kafka.brokers.join(','),
        MELD_CLICKHOUSE_DB: o.store.database,
        MELD_PROBES_EVENTS_GROUP: `bench-events-${o.tag}`,
        MELD_PROBES_AUDIENCE_GROUP: `bench-audience-${o.tag}`,
      },
      o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`] : [],
    );
    try {
      await waitReady(`http://127.0.0.1:${port}/readyz`);
      const sampler = new RssSampler([
        { name: 'probes', pid: probes.pid! },
        { name: 'kafka', pid: kafka.pid },
      ]).start();
      // This round's events only (event ids are `<tag>-<n>`; rounds share the table).
      const visible = async () =>
        Number((await o.store.ch.query<{ n: string }>(sql`SELECT count() AS n FROM events WHERE project_id = ${o.spec(0).projectId} AND event_id >= ${`${o.tag}-`} AND event_id < ${`${o.tag}.`}`))[0].n);
      let first: { t: bigint; n: number; cpu: number } | undefined;
      let seen = 0;
      let lastChange = Date.now();
      for (;;) {
        const n = await visible();
        const t = process.hrtime.bigint();
        if (n > 0 && !first) first = { t, n, cpu: processCpuUs(probes.pid!) };
        if (n >= o.events) {
          const s = Number(t - first!.t) / 1e9;
          if (first!.n >= o.events) throw new Error('every event was visible at the first look: too few --events to time the drain');
          const cpu = processCpuUs(probes.pid!) - first!.cpu;
          const drained = n - first!.n;
          return { eventsPerS: drained / s, cpuUsPerEvent: cpu / drained, rssMb: sampler.stop() };
        }
        if (n !== seen) {
          if (Math.floor(n / 50_000) !== Math.floor(seen / 50_000)) ctx.log(`${n} rows visible`);
          [seen, lastChange] = [n, Date.now()];
        }
        if (Date.now() - lastChange > 30_000) throw new Error(`events sink stuck at ${n}/${o.events} rows for 30 s (the dev broker drops a partition's oldest messages beyond 5 MB)`);
        await sleep(25);
      }
    } finally {
      await stopApp(probes);
    }
  } finally {
    await producer.disconnect().catch(() => undefined);
    await kafka.stop();
  }
}

async function rawInsert(ch: Awaited<ReturnType<typeof benchClickHouse>>['ch'], table: string, events: number, batch: number, row: (n: number) => object): Promise<Drain> {
  await ch.command(`CREATE TABLE ${table} AS events`);
  const cpu0 = selfCpuUs();
  const t0 = process.hrtime.bigint();
  for (let from = 0; from < events; from += batch) {
    const rows = [];
    for (let n = from; n < Math.min(events, from + batch); n++) rows.push(row(n));
    await ch.insert(table, rows);
  }
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return { eventsPerS: events / s, cpuUsPerEvent: (selfCpuUs() - cpu0) / events, rssMb: {} };
}

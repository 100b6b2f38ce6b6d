/**
 * kafka: N small keyed JSON messages produced and consumed through libs/kafka (producer +
 * consumer runner with a trivial handler) against plain kafkajs doing the same work (the
 * same bytes: JSON value plus the schema-version header; produce batches of 1,000 with
 * acks -1; an eachBatch consumer that decodes each value), in the same run, rotating the
 * order over several repetitions after a warm-up. Two references are printed besides:
 * kafkajs-2p, plain kafkajs with partitionsConsumedConcurrently 2 like the runner's default
 * (so the runner's own overhead is visible apart from that default), and kafkajs-no-header,
 * what the header itself costs in kafkajs.
 *
 * Options: --messages N (1,000,000), --reps R (3), --keys K (10,000), --round M, --warmup W
 * (100,000; --no-warmup), --variants a,b (of libs/kafka, kafkajs, kafkajs-2p,
 * kafkajs-no-header; for profiling), --brokers host:port (use a running broker instead of a private one),
 * --broker-pid PID (that broker's memory and CPU).
 *
 * Broker: by default a private development broker (tools/stack's kafka-dev-broker) per
 * measurement, its topic pre-created with 8 partitions like the contract topics, stopped
 * afterwards. With --brokers, unique topics on that broker (the mock auto-creates them with
 * 4 partitions) and unique consumer groups keep runs apart.
 *
 * Rounds: the development broker keeps at most 5 MB per partition and drops the oldest
 * messages past that, so a million messages cannot all wait to be consumed. Each round
 * produces M messages with the consumer paused, then resumes it and times until all M have
 * arrived. Produce and consume are timed separately, so on this 2-core box neither side's
 * figure includes the other's CPU.
 *
 * NestJS transport (ADR 0237, issue 14 item 7), only when named in --variants: nest-transport
 * (the runner dispatching each message to an `@EventPattern` handler through a
 * CustomTransportStrategy, compared with libs/kafka, the runner calling the same handler),
 * libs/kafka-sink (the batch sink runner writing each batch to the handler) and
 * nest-transport-batch (each such batch dispatched to an `@EventPattern` handler, compared with
 * libs/kafka-sink); bench/lib/nest-kafka-transport.ts. They need @nestjs/microservices, which
 * Meld does not install: run them from a throwaway copy of the tree with it added, e.g.
 *   mkdir /tmp/t && tar -C . --exclude=./node_modules --exclude=./.git -cf - . | tar -C /tmp/t -xf -
 *   cp -al node_modules /tmp/t/ && cd /tmp/t && npm install --no-save --legacy-peer-deps @nestjs/microservices@12.1.1
 *   npm run bench -- kafka --variants libs/kafka,nest-transport,libs/kafka-sink,nest-transport-batch
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { Registry } from 'prom-client';
import { z } from 'zod';
import { createConsumerRunner, createProducer, ensureTopics, topicHandler } from '../../libs/kafka/src';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { processCpuUs, selfCpuUs } from '../lib/cpu';
import { openNestTransport, openNestTransportBatch, openSinkDirect, type BenchPipe, type PipeOptions } from '../lib/nest-kafka-transport';
import { startPrivateKafka } from '../lib/private-kafka';
import { RssSampler, watchedProcesses, type WatchedProcess } from '../lib/processes';
import { median, percentile } from '../lib/stats';

const BenchValue = z.object({ n: z.number().int(), id: z.string(), kind: z.literal('bench'), at: z.number() });
type BenchValue = z.infer<typeof BenchValue>;

/** Both variants fetch with the same wait (kafkajs's 5 s default stalls on the mock broker). */
const MAX_WAIT_MS = 100;
const MOCK_PARTITION_BYTES = 5 * 1024 * 1024;
/** Upper estimate of one message on the wire (key, JSON value, header, record overhead). */
const EST_MESSAGE_BYTES = 120;
const PARTITIONS = 8;
const CHUNK = 1000;

interface Pipe {
  send(messages: Array<{ key: string; value: BenchValue }>): Promise<void>;
  consumer: Consumer;
  close(): Promise<void>;
}

interface Variant {
  name: string;
  /** The variant its rows are compared with, when not plain kafkajs. */
  baseline?: string;
  open(brokers: string[], topic: string, groupId: string, seen: (n: number) => void): Promise<Pipe>;
}

const libKafka: Variant = {
  name: 'libs/kafka',
  async open(brokers, topic, groupId, seen) {
    const metrics = new Registry();
    const producer = createProducer({ brokers, clientId: 'bench-lib', metrics });
    const runner = createConsumerRunner({
      brokers,
      clientId: 'bench-lib',
      groupId,
      metrics,
      maxWaitTimeInMs: MAX_WAIT_MS,
      handlers: [topicHandler({ topic, schema: BenchValue, handle: (m) => seen(m.value.n) })],
    });
    await producer.connect();
    await runner.start();
    return {
      send: (messages) => producer.send(topic, messages),
      consumer: runner.consumer,
      close: async () => {
        await runner.stop();
        await producer.disconnect();
      },
    };
  },
};

/**
 * The baseline: what a Meld service would write with kafkajs alone for the same contract,
 * i.e. the same bytes on the wire, decoded on the consuming side. `header: false` gives the
 * reference without the header (kafkajs allocates two encoders per header per record).
 */
function plain(name: string, header: boolean, partitionsConsumedConcurrently = 1): Variant {
  return {
    name,
    async open(brokers, topic, groupId, seen) {
      const kafka = new Kafka({ brokers, clientId: 'bench-plain', logLevel: logLevel.NOTHING });
      const producer = kafka.producer();
      const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: MAX_WAIT_MS });
      await producer.connect();
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        partitionsConsumedConcurrently,
        eachBatch: async ({ batch }) => {
          for (const m of batch.messages) seen((JSON.parse(m.value!.toString()) as BenchValue).n);
        },
      });
      return {
        send: async (messages) => {
          await producer.send({
            topic,
            acks: -1,
            messages: messages.map((m) => ({ key: m.key, value: JSON.stringify(m.value), headers: header ? { 'schema-version': '1' } : undefined })),
          });
        },
        consumer,
        close: async () => {
          await consumer.disconnect();
          await producer.disconnect();
        },
      };
    },
  };
}

const plainKafkajs = plain('kafkajs', true);
const plainNoHeader = plain('kafkajs-no-header', false);
/** Plain kafkajs with the runner's default partition concurrency: shows what that default buys. */
const plainTwoPartitions = plain('kafkajs-2p', true, 2);

function runnerVariant(name: string, baseline: string | undefined, open: (o: PipeOptions<BenchValue>) => Promise<BenchPipe<BenchValue>>): Variant {
  return {
    name,
    baseline,
    open: (brokers, topic, groupId, seen) => open({ brokers, topic, groupId, schema: BenchValue, maxWaitTimeInMs: MAX_WAIT_MS, handle: (v) => seen(v.n) }),
  };
}

/** The NestJS transport and its batch reference (ADR 0237): run only when named in --variants. */
const transportVariants = [
  runnerVariant('nest-transport', libKafka.name, openNestTransport),
  runnerVariant('libs/kafka-sink', undefined, openSinkDirect),
  runnerVariant('nest-transport-batch', 'libs/kafka-sink', openNestTransportBatch),
];

interface RunFigures {
  produceRate: number;
  consumeRate: number;
  totalRate: number;
  sendP50: number;
  sendP99: number;
  batchP50: number;
  batchP99: number;
  produceCpuUs: number;
  consumeCpuUs: number;
  brokerCpuUs: number;
  duplicates: number;
  [key: string]: number;
}

interface Measured {
  figures: RunFigures;
  rss: Record<string, number>;
  partitions: number;
  round: number;
}

interface Setup {
  messages: number;
  explicitRound?: number;
  keys: number;
  /** A running broker to use (--brokers); otherwise a private one per measurement. */
  shared?: { brokers: string[]; processes: WatchedProcess[] };
}

async function measure(ctx: BenchContext, variant: Variant, setup: Setup): Promise<Measured> {
  const tag = randomUUID().slice(0, 8);
  let brokers: string[];
  let processes: WatchedProcess[];
  let stopBroker = async (): Promise<void> => undefined;
  let topic: string;
  if (setup.shared) {
    brokers = setup.shared.brokers;
    processes = setup.shared.processes;
    topic = `bench.kafka.${tag}`;
    await ensureTopics(brokers, [topic, `${topic}.dlq`], { autoCreateFallback: true, numPartitions: PARTITIONS });
  } else {
    topic = 'bench.kafka';
    const broker = await startPrivateKafka(ctx.root, [topic, `${topic}.dlq`], PARTITIONS, ctx.log);
    brokers = broker.brokers;
    processes = watchedProcesses(ctx.root, [{ name: 'kafka', pid: broker.pid }], { stackKafka: false });
    stopBroker = broker.stop;
  }
  const brokerPid = processes.find((p) => p.name === 'kafka')?.pid;
  try {
    const partitions = await partitionCount(brokers, topic);
    // A round fills at most half of the development broker's per-partition retention.
    const round = setup.explicitRound ?? Math.min(100_000, Math.floor((partitions * MOCK_PARTITION_BYTES * 0.5) / EST_MESSAGE_BYTES));
    const result = await measureOn(ctx, variant, brokers, topic, tag, { ...setup, round }, processes, brokerPid);
    return { ...result, partitions, round };
  } finally {
    await stopBroker();
  }
}

async function measureOn(
  ctx: BenchContext,
  variant: Variant,
  brokers: string[],
  topic: string,
  tag: string,
  opts: { messages: number; round: number; keys: number },
  processes: WatchedProcess[],
  brokerPid: number | undefined,
): Promise<{ figures: RunFigures; rss: Record<string, number> }> {
  const seenBits = new Uint8Array(opts.messages);
  let seenCount = 0;
  let duplicates = 0;
  let target = 0;
  let reached: (() => void) | undefined;
  const seen = (n: number): void => {
    if (seenBits[n]) duplicates++;
    else {
      seenBits[n] = 1;
      seenCount++;
      if (seenCount >= target && reached) {
        const r = reached;
        reached = undefined;
        r();
      }
    }
  };

  const sampler = new RssSampler(processes).start();
  const pipe = await variant.open(brokers, topic, `bench-${tag}`, seen);

  // Batch processing time, timed around kafkajs's own batch events (the same hook for every variant).
  const batchMs: number[] = [];
  const batchStart = new Map<number, bigint>();
  let timing = false;
  pipe.consumer.on(pipe.consumer.events.START_BATCH_PROCESS, (e) => batchStart.set(e.payload.partition, process.hrtime.bigint()));
  pipe.consumer.on(pipe.consumer.events.END_BATCH_PROCESS, (e) => {
    const start = batchStart.get(e.payload.partition);
    if (timing && start !== undefined) batchMs.push(Number(process.hrtime.bigint() - start) / 1e6);
  });

  const sendMs: number[] = [];
  let produceNs = 0n;
  let consumeNs = 0n;
  let produceCpu = 0;
  let consumeCpu = 0;
  let brokerCpu = 0;
  const paused = [{ topic }];
  try {
    for (let roundStart = 0; roundStart < opts.messages; roundStart += opts.round) {
      const roundEnd = Math.min(opts.messages, roundStart + opts.round);
      pipe.consumer.pause(paused);
      // Let a fetch already in flight come back before producing, so the round is consumed only after resume.
      await new Promise((r) => setTimeout(r, 3 * MAX_WAIT_MS));
      const brokerCpu0 = brokerPid ? processCpuUs(brokerPid) : Number.NaN;
      for (let i = roundStart; i < roundEnd; i += CHUNK) {
        const chunk: Array<{ key: string; value: BenchValue }> = [];
        for (let n = i; n < Math.min(roundEnd, i + CHUNK); n++) {
          chunk.push({ key: `${tag}-${n % opts.keys}`, value: { n, id: `${tag}-${n}`, kind: 'bench', at: Date.now() } });
        }
        const cpu0 = selfCpuUs();
        const t0 = process.hrtime.bigint();
        await pipe.send(chunk);
        const dt = process.hrtime.bigint() - t0;
        produceCpu += selfCpuUs() - cpu0;
        produceNs += dt;
        sendMs.push(Number(dt) / 1e6);
      }
      target = roundEnd;
      const done = new Promise<void>((resolve) => {
        reached = resolve;
        if (seenCount >= target) resolve();
      });
      const cpu0 = selfCpuUs();
      const t0 = process.hrtime.bigint();
      timing = true;
      pipe.consumer.resume(paused);
      await withStallTimeout(done, () => seenCount, 30_000, `${variant.name}: stuck at ${seenCount}/${target} messages (lost to broker retention?)`);
      consumeNs += process.hrtime.bigint() - t0;
      consumeCpu += selfCpuUs() - cpu0;
      timing = false;
      if (brokerPid) brokerCpu += processCpuUs(brokerPid) - brokerCpu0;
    }
  } finally {
    await pipe.close();
  }
  const rss = sampler.stop();
  const produceS = Number(produceNs) / 1e9;
  const consumeS = Number(consumeNs) / 1e9;
  ctx.log(
    `${variant.name}: produce ${Math.round(opts.messages / produceS)} msg/s, consume ${Math.round(opts.messages / consumeS)} msg/s, ` +
      `cpu ${(produceCpu / opts.messages).toFixed(2)} + ${(consumeCpu / opts.messages).toFixed(2)} µs/msg, duplicates ${duplicates}`,
  );
  return {
    rss,
    figures: {
      produceRate: opts.messages / produceS,
      consumeRate: opts.messages / consumeS,
      totalRate: opts.messages / (produceS + consumeS),
      sendP50: percentile(sendMs, 50),
      sendP99: percentile(sendMs, 99),
      batchP50: percentile(batchMs, 50),
      batchP99: percentile(batchMs, 99),
      produceCpuUs: produceCpu / opts.messages,
      consumeCpuUs: consumeCpu / opts.messages,
      brokerCpuUs: brokerCpu / opts.messages,
      duplicates,
    },
  };
}

async function partitionCount(brokers: string[], topic: string): Promise<number> {
  const admin = new Kafka({ brokers, clientId: 'bench-admin', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const md = await admin.fetchTopicMetadata({ topics: [topic] });
    return md.topics[0].partitions.length;
  } finally {
    await admin.disconnect();
  }
}

/** The row a variant's row is compared with: its own baseline when measured, else plain kafkajs when measured. */
function baselineRow(v: Variant, kind: string, variants: Variant[]): string | undefined {
  const base = variants.find((b) => b.name === (v.baseline ?? plainKafkajs.name));
  return base && base !== v ? `${kind} ${base.name}` : undefined;
}

/** Waits for `done`, failing only when `progress` has not moved for `stallMs`. */
async function withStallTimeout(done: Promise<void>, progress: () => number, stallMs: number, message: string): Promise<void> {
  let last = progress();
  let lastChange = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      const now = progress();
      if (now !== last) {
        last = now;
        lastChange = Date.now();
      } else if (Date.now() - lastChange > stallMs) reject(new Error(message));
    }, 500);
  });
  try {
    await Promise.race([done, stalled]);
  } finally {
    clearInterval(timer);
  }
}

export async function run(ctx: BenchContext): Promise<ScenarioResult> {
  const messages = ctx.args.int('messages', 1_000_000);
  const reps = ctx.args.int('reps', 3);
  const keys = ctx.args.int('keys', 10_000);
  const warmup = ctx.args.flag('no-warmup') ? 0 : Math.min(messages, ctx.args.int('warmup', 100_000));
  const explicitRound = ctx.args.string('round') ? ctx.args.int('round', 1) : undefined;
  const sharedBrokers = ctx.args.string('brokers');
  const shared = sharedBrokers
    ? { brokers: ctx.kafkaBrokers(), processes: watchedProcesses(ctx.root, ctx.extraProcesses(), { stackKafka: ctx.usesStackKafka() }) }
    : undefined;
  const only = ctx.args.string('variants')?.split(',');
  const variants = [libKafka, plainKafkajs, plainTwoPartitions, plainNoHeader, ...(only ? transportVariants : [])].filter((v) => !only || only.includes(v.name));
  ctx.log(`${messages} messages x ${reps} runs per variant (${variants.map((v) => v.name).join(', ')}); broker: ${shared ? shared.brokers.join(',') : 'private per run'}`);

  if (warmup > 0) {
    for (const variant of variants) {
      ctx.log(`warm-up ${variant.name} (${warmup} messages, not counted)`);
      await measure(ctx, variant, { messages: warmup, explicitRound, keys, shared });
    }
  }

  const figures = new Map<string, RunFigures[]>(variants.map((v) => [v.name, []]));
  const rss = new Map<string, Array<Record<string, number>>>(variants.map((v) => [v.name, []]));
  let partitions = 0;
  let round = 0;
  for (let rep = 0; rep < reps; rep++) {
    // Rotate which variant goes first so drift on a shared box does not favour one.
    const order = [...variants.slice(rep % variants.length), ...variants.slice(0, rep % variants.length)];
    for (const variant of order) {
      ctx.log(`run ${rep + 1}/${reps} ${variant.name}`);
      const result = await measure(ctx, variant, { messages, explicitRound, keys, shared });
      partitions = result.partitions;
      round = result.round;
      figures.get(variant.name)!.push(result.figures);
      rss.get(variant.name)!.push(result.rss);
    }
  }

  const med = (name: string, key: keyof RunFigures): number => median(figures.get(name)!.map((f) => f[key]));
  const procNames = [...new Set([...rss.values()].flat().flatMap((r) => Object.keys(r)))];
  const peak = (name: string): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const p of procNames) {
      // Apps restart while the bench runs (another engineer's `meld start`): skip runs without a reading.
      const values = rss.get(name)!.map((r) => r[p]).filter((v) => Number.isFinite(v));
      out[p] = values.length ? Math.max(...values) : Number.NaN;
    }
    return out;
  };
  const rows: BenchRow[] = [];
  for (const [kind, rate, p50, p99, cpu] of [
    ['produce', 'produceRate', 'sendP50', 'sendP99', 'produceCpuUs'],
    ['consume', 'consumeRate', 'batchP50', 'batchP99', 'consumeCpuUs'],
    ['produce+consume', 'totalRate', '', '', ''],
  ] as const) {
    for (const v of variants) {
      rows.push({
        name: `${kind} ${v.name}`,
        throughput: med(v.name, rate),
        p50Ms: p50 ? med(v.name, p50) : Number.NaN,
        p99Ms: p99 ? med(v.name, p99) : Number.NaN,
        cpuUsPerOp: cpu ? med(v.name, cpu) : med(v.name, 'produceCpuUs') + med(v.name, 'consumeCpuUs'),
        peakRssMb: peak(v.name),
        baseline: baselineRow(v, kind, variants),
        runs: reps,
      });
    }
  }
  const list = (v: Variant, key: keyof RunFigures, digits = 0): string => figures.get(v.name)!.map((f) => f[key].toFixed(digits)).join(' / ');
  return {
    title: `kafka: ${messages.toLocaleString('en-US')} messages, ${keys.toLocaleString('en-US')} keys, ${partitions} partitions, produce batches of ${CHUNK}, acks -1`,
    units: { throughput: 'msg/s', latency: 'produce: one send() of 1,000 messages; consume: one partition batch', cpu: 'CPU µs/msg of the bench process' },
    rows,
    notes: [
      ...variants.map((v) => `${v.name} per run: produce ${list(v, 'produceRate')}, consume ${list(v, 'consumeRate')} msg/s; duplicates ${list(v, 'duplicates')}`),
      ...(variants.some((v) => figures.get(v.name)!.some((f) => Number.isFinite(f.brokerCpuUs)))
        ? [`broker CPU µs/msg (produce+consume): ${variants.map((v) => `${v.name} ${med(v.name, 'brokerCpuUs').toFixed(2)}`).join(', ')}`]
        : []),
      `broker: ${shared ? `${shared.brokers.join(',')} (shared; unique topic and group per run)` : 'private kafka-dev-broker per run (topic pre-created)'}; rounds of ${round} messages (consumer paused while a round is produced: the development broker keeps 5 MB per partition)`,
      `warm-up: ${warmup ? `${warmup} messages per variant, not counted` : 'none'}; peak RSS = VmRSS sampled every 200 ms during each run`,
    ],
    goals: variants.includes(libKafka) && variants.includes(plainKafkajs)
      ? [
          { row: `produce ${libKafka.name}`, minRatio: 0.9 },
          { row: `consume ${libKafka.name}`, minRatio: 0.9 },
          { row: `produce+consume ${libKafka.name}`, minRatio: 0.9 },
        ]
      : [],
  };
}

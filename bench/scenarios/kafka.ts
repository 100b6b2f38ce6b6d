/**
 * kafka: N small keyed JSON messages produced and consumed through libs/kafka (producer +
 * consumer runner with a trivial handler) against plain kafkajs doing the same work
 * (same bytes: JSON values with the schema-version header; produce batches of 1,000 with
 * acks -1; eachBatch consume that decodes each value), in the same run, rotating the order
 * over several repetitions. A third variant, plain kafkajs without the header, is printed
 * as a reference for what the header costs.
 *
 * Options: --messages N (1,000,000), --reps R (3), --round M (fits the broker's retention),
 * --keys K (10,000 distinct keys), --brokers host:port, --broker-pid PID (the broker's memory
 * when it is not the stack's), --variants a,b (some of libs/kafka, kafkajs, kafkajs-no-header; for profiling).
 *
 * Why rounds: the development broker (librdkafka's mock cluster) keeps at most 5 MB per
 * partition and silently drops the oldest messages past that, so producing a million
 * messages before consuming them would lose most. Each round produces M messages with the
 * consumer paused, then resumes it and times until all M arrived; produce and consume are
 * timed separately, so neither side's figure includes the other's CPU on this 2-core box.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { Registry } from 'prom-client';
import { z } from 'zod';
import { createConsumerRunner, createProducer, ensureTopics, topicHandler } from '../../libs/kafka/src';
import type { BenchContext, BenchRow, ScenarioResult } from '../lib/context';
import { RssSampler, watchedProcesses, type WatchedProcess } from '../lib/processes';
import { median, percentile } from '../lib/stats';

const BenchValue = z.object({ n: z.number().int(), id: z.string(), kind: z.literal('bench'), at: z.number() });
type BenchValue = z.infer<typeof BenchValue>;

/** Both variants fetch with the same wait (kafkajs's 5 s default stalls on the mock broker). */
const MAX_WAIT_MS = 100;
const MOCK_PARTITION_BYTES = 5 * 1024 * 1024;
/** Upper estimate of one message on the wire (key, JSON value, header, record overhead). */
const EST_MESSAGE_BYTES = 120;

interface Pipe {
  send(messages: Array<{ key: string; value: BenchValue }>): Promise<void>;
  consumer: Consumer;
  close(): Promise<void>;
}

interface Variant {
  name: string;
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
 * i.e. the same bytes on the wire (JSON value and the schema-version header), decoded on
 * the consuming side. `header: false` gives a reference without the header, to show what
 * the header itself costs in kafkajs (it allocates two encoders per header per record).
 */
function plain(name: string, header: boolean): Variant {
  const schemaHeader = { 'schema-version': '1' };
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
        eachBatch: async ({ batch }) => {
          for (const m of batch.messages) seen((JSON.parse(m.value!.toString()) as BenchValue).n);
        },
      });
      return {
        send: async (messages) => {
          await producer.send({
            topic,
            acks: -1,
            messages: messages.map((m) => ({ key: m.key, value: JSON.stringify(m.value), headers: header ? { ...schemaHeader } : undefined })),
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

interface RunFigures {
  produceRate: number;
  consumeRate: number;
  totalRate: number;
  sendP50: number;
  sendP99: number;
  batchP50: number;
  batchP99: number;
  duplicates: number;
  [key: string]: number;
}

async function measure(
  ctx: BenchContext,
  variant: Variant,
  brokers: string[],
  opts: { messages: number; explicitRound?: number; keys: number; chunk: number },
  processes: WatchedProcess[],
): Promise<{ figures: RunFigures; rss: Record<string, number>; partitions: number; round: number }> {
  const tag = randomUUID().slice(0, 8);
  const topic = `bench.kafka.${tag}`;
  await ensureTopics(brokers, [topic, `${topic}.dlq`], { autoCreateFallback: true, numPartitions: 8 });
  // The development broker auto-creates with its default partition count (4), real Kafka gets 8.
  const partitions = await partitionCount(brokers, topic);
  // A round fills at most half of the development broker's per-partition retention.
  const round = opts.explicitRound ?? Math.min(100_000, Math.floor((partitions * MOCK_PARTITION_BYTES * 0.5) / EST_MESSAGE_BYTES));

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

  // Batch processing time, timed around kafkajs's own batch events (same hook for both variants).
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
  const paused = [{ topic }];
  try {
    for (let roundStart = 0; roundStart < opts.messages; roundStart += round) {
      const roundEnd = Math.min(opts.messages, roundStart + round);
      pipe.consumer.pause(paused);
      // Let a fetch already in flight come back before producing, so the round is consumed only after resume.
      await new Promise((r) => setTimeout(r, 3 * MAX_WAIT_MS));
      for (let i = roundStart; i < roundEnd; i += opts.chunk) {
        const chunk: Array<{ key: string; value: BenchValue }> = [];
        for (let n = i; n < Math.min(roundEnd, i + opts.chunk); n++) {
          chunk.push({ key: `${tag}-${n % opts.keys}`, value: { n, id: `${tag}-${n}`, kind: 'bench', at: Date.now() } });
        }
        const t0 = process.hrtime.bigint();
        await pipe.send(chunk);
        const dt = process.hrtime.bigint() - t0;
        produceNs += dt;
        sendMs.push(Number(dt) / 1e6);
      }
      target = roundEnd;
      const done = new Promise<void>((resolve) => {
        reached = resolve;
        if (seenCount >= target) resolve();
      });
      const t0 = process.hrtime.bigint();
      timing = true;
      pipe.consumer.resume(paused);
      await withStallTimeout(done, () => seenCount, 30_000, `${variant.name}: stuck at ${seenCount}/${target} messages (lost to broker retention?)`);
      consumeNs += process.hrtime.bigint() - t0;
      timing = false;
    }
  } finally {
    await pipe.close();
  }
  const rss = sampler.stop();
  const produceS = Number(produceNs) / 1e9;
  const consumeS = Number(consumeNs) / 1e9;
  ctx.log(`${variant.name}: produce ${(opts.messages / produceS).toFixed(0)} msg/s, consume ${(opts.messages / consumeS).toFixed(0)} msg/s, duplicates ${duplicates}`);
  return {
    partitions,
    round,
    rss,
    figures: {
      produceRate: opts.messages / produceS,
      consumeRate: opts.messages / consumeS,
      totalRate: opts.messages / (produceS + consumeS),
      sendP50: percentile(sendMs, 50),
      sendP99: percentile(sendMs, 99),
      batchP50: percentile(batchMs, 50),
      batchP99: percentile(batchMs, 99),
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
  const brokers = ctx.kafkaBrokers();
  const messages = ctx.args.int('messages', 1_000_000);
  const reps = ctx.args.int('reps', 3);
  const keys = ctx.args.int('keys', 10_000);
  const chunk = 1000;
  const processes = watchedProcesses(ctx.root, ctx.extraProcesses(), { stackKafka: ctx.usesStackKafka() });
  ctx.log(`brokers ${brokers.join(',')}; ${messages} messages x ${reps} runs per variant; watching ${processes.map((p) => `${p.name}(${p.pid})`).join(', ')}`);

  // --variants libs/kafka runs one side only (for profiling with --cpu-prof).
  const only = ctx.args.string('variants')?.split(',');
  const variants = [libKafka, plainKafkajs, plainNoHeader].filter((v) => !only || only.includes(v.name));
  const figures = new Map<string, RunFigures[]>(variants.map((v) => [v.name, []]));
  const rss = new Map<string, Array<Record<string, number>>>(variants.map((v) => [v.name, []]));
  let partitions = 0;
  let round = 0;
  const explicitRound = ctx.args.string('round') ? ctx.args.int('round', 1) : undefined;
  for (let rep = 0; rep < reps; rep++) {
    // Rotate which variant goes first so warm-up and broker state do not favour one.
    for (const variant of [...variants.slice(rep % variants.length), ...variants.slice(0, rep % variants.length)]) {
      ctx.log(`run ${rep + 1}/${reps} ${variant.name}`);
      (globalThis as { gc?: () => void }).gc?.();
      const result = await measure(ctx, variant, brokers, { messages, explicitRound, keys, chunk }, processes);
      partitions = result.partitions;
      round = result.round;
      figures.get(variant.name)!.push(result.figures);
      rss.get(variant.name)!.push(result.rss);
    }
  }

  const med = (name: string, key: keyof RunFigures): number => median(figures.get(name)!.map((f) => f[key]));
  const peak = (name: string): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const p of processes) out[p.name] = Math.max(...rss.get(name)!.map((r) => r[p.name] ?? Number.NaN));
    return out;
  };
  const rows: BenchRow[] = [];
  for (const [kind, rate, p50, p99] of [
    ['produce', 'produceRate', 'sendP50', 'sendP99'],
    ['consume', 'consumeRate', 'batchP50', 'batchP99'],
    ['produce+consume', 'totalRate', 'sendP50', 'sendP99'],
  ] as const) {
    for (const v of variants) {
      rows.push({
        name: `${kind} ${v.name}`,
        throughput: med(v.name, rate),
        p50Ms: kind === 'produce+consume' ? Number.NaN : med(v.name, p50),
        p99Ms: kind === 'produce+consume' ? Number.NaN : med(v.name, p99),
        peakRssMb: peak(v.name),
        baseline: v === plainKafkajs ? undefined : `${kind} ${plainKafkajs.name}`,
        runs: reps,
      });
    }
  }
  const dupes = variants.map((v) => `${v.name} ${figures.get(v.name)!.map((f) => f.duplicates).join('/')}`).join(', ');
  const perRun = variants
    .map((v) => `${v.name}: produce ${figures.get(v.name)!.map((f) => Math.round(f.produceRate)).join(' / ')}, consume ${figures.get(v.name)!.map((f) => Math.round(f.consumeRate)).join(' / ')} msg/s`)
    .join('; ');
  return {
    title: `kafka: ${messages.toLocaleString('en-US')} messages, ${keys.toLocaleString('en-US')} keys, ${partitions} partitions, produce batches of ${chunk}, acks -1`,
    units: { throughput: 'msg/s', latency: 'produce: one send() of 1,000 messages; consume: one partition batch' },
    rows,
    notes: [
      `per run ${perRun}`,
      `duplicates per run (at-least-once, expected 0 without failures): ${dupes}`,
      `rounds of ${round} messages (consumer paused while a round is produced; development broker retention is 5 MB per partition)`,
      'peak RSS: VmRSS sampled every 200 ms during each run; the bench process runs producer and consumer of the variant',
    ],
    goals: [
      { row: `produce ${libKafka.name}`, minRatio: 0.9 },
      { row: `consume ${libKafka.name}`, minRatio: 0.9 },
      { row: `produce+consume ${libKafka.name}`, minRatio: 0.9 },
    ],
  };
}

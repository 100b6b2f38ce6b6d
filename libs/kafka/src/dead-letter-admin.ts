import { randomUUID } from 'node:crypto';
import type { IHeaders, Kafka, KafkaMessage, Message } from 'kafkajs';
import { createKafkaClient, type KafkaConnectionOptions } from './client';
import { defaultDeadLetterTopic } from './dead-letter';
import { DlqHeaders, headerString } from './headers';
import { createProducer } from './producer';

/**
 * Operators' view of a dead-letter topic (ADR 0112): list what is waiting, replay it to its
 * source topic. What was replayed is committed by the topic's replay group, so a second replay
 * does not repeat it and `list` shows only what is still waiting (`all` shows everything kept).
 */
/** One group per dead-letter topic: replays of different topics never rebalance each other. */
export function replayGroupOf(dlqTopic: string): string {
  return `meld-dlq-replay.${dlqTopic}`;
}

export interface DeadLetterEntry {
  partition: number;
  offset: string;
  key: string | null;
  /** Where it came from and why it is here (the `dlq-*` headers). */
  sourceTopic: string;
  sourcePartition: number | undefined;
  sourceOffset: string | undefined;
  reason: string | undefined;
  error: string | undefined;
  attempts: number | undefined;
  group: string | undefined;
  /** When it was dead-lettered (ISO), else the broker timestamp. */
  time: string;
  /** The value's size; values are never printed (they hold contact data). */
  bytes: number;
}

export interface DeadLetterAdminOptions extends KafkaConnectionOptions {
  kafka?: Kafka;
}

/** `meld.contacts.v1` or `meld.contacts.v1.dlq` → the dead-letter topic. */
export function deadLetterTopicOf(topic: string): string {
  return topic.endsWith('.dlq') ? topic : defaultDeadLetterTopic(topic);
}

/** The dead letters not replayed yet (or, with `all`, every one the topic still keeps). */
export async function listDeadLetters(options: DeadLetterAdminOptions & { topic: string; all?: boolean; limit?: number }): Promise<DeadLetterEntry[]> {
  const topic = deadLetterTopicOf(options.topic);
  const kafka = options.kafka ?? createKafkaClient(options);
  const entries: DeadLetterEntry[] = [];
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  // A throwaway group that commits nothing: listing never moves the replay group.
  await readToEnd(kafka, topic, `meld-dlq-list-${randomUUID()}`, options.all ? 'earliest' : 'replayed', async (partition, messages) => {
    for (const m of messages) if (entries.length < limit) entries.push(entryOf(topic, partition, m));
    return entries.length < limit;
  });
  return entries;
}

export interface ReplayProgress {
  replayed: number;
  total: number;
}

/**
 * Re-produces every dead letter not replayed yet to its source topic (the `dlq-topic` header;
 * handlers are idempotent, so a message that was in fact processed is harmless), with its key,
 * value and original headers, then commits the replay group's offsets of what was sent. Only
 * what was there when the replay started is replayed: a message that fails again comes back
 * as a new dead letter for the next replay, not in a loop.
 */
export async function replayDeadLetters(options: DeadLetterAdminOptions & { topic: string; onProgress?: (p: ReplayProgress) => void }): Promise<ReplayProgress> {
  const topic = deadLetterTopicOf(options.topic);
  const kafka = options.kafka ?? createKafkaClient(options);
  const producer = createProducer({ ...options, kafka });
  await producer.connect();
  const progress: ReplayProgress = { replayed: 0, total: 0 };
  try {
    await readToEnd(
      kafka,
      topic,
      replayGroupOf(topic),
      'replayed',
      async (partition, messages, commit) => {
        const bySource = new Map<string, Message[]>();
        for (const m of messages) {
          const source = headerString(m.headers, DlqHeaders.topic) ?? topic.slice(0, -'.dlq'.length);
          let list = bySource.get(source);
          if (!list) bySource.set(source, (list = []));
          list.push({ key: m.key, value: m.value, headers: withoutDlqHeaders(m.headers) });
        }
        for (const [source, list] of bySource) await producer.sendRaw(source, list);
        await commit();
        progress.replayed += messages.length;
        options.onProgress?.({ ...progress });
        return true;
      },
      (total) => {
        progress.total = total;
        options.onProgress?.({ ...progress });
      },
    );
  } finally {
    await producer.disconnect();
  }
  return progress;
}

type From = 'earliest' | 'replayed';

/**
 * The session of the one-shot consumer that reads a dead-letter topic: Kafka's smallest default
 * (group.min.session.timeout.ms). A member that left without its LeaveGroup being honoured (the
 * development broker does not drop it) holds the replay group until its session ends, so with
 * kafkajs's 30 s a second replay within half a minute waited ~25 s to join. Heartbeats go after
 * every batch, well inside it.
 */
const READER_SESSION_TIMEOUT_MS = 6000;
type OnBatch = (partition: number, messages: KafkaMessage[], commit: () => Promise<void>) => Promise<boolean>;

/**
 * Reads `topic` from `from` (the beginning, or the replay group's committed offsets) up to the
 * high watermarks seen at the start, calling `onBatch` per partition batch; stops early when it
 * returns false. kafkajs has no assign(): a consumer group does the reading (the replay group
 * resumes at its commits; a new list group reads from the beginning and skips).
 */
async function readToEnd(kafka: Kafka, topic: string, groupId: string, from: From, onBatch: OnBatch, onTotal?: (total: number) => void): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  const end = new Map<number, bigint>();
  const start = new Map<number, bigint>();
  try {
    const [watermarks, [committed]] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId: replayGroupOf(topic), topics: [topic] })]);
    const done = new Map(committed.partitions.map((p) => [p.partition, BigInt(p.offset)]));
    for (const w of watermarks) {
      const low = BigInt(w.low);
      const replayed = done.get(w.partition) ?? -1n;
      start.set(w.partition, from === 'replayed' && replayed > low ? replayed : low);
      end.set(w.partition, BigInt(w.high));
    }
  } finally {
    await admin.disconnect();
  }
  const waiting = new Set([...end].filter(([p, high]) => (start.get(p) ?? 0n) < high).map(([p]) => p));
  onTotal?.([...waiting].reduce((n, p) => n + Number((end.get(p) ?? 0n) - (start.get(p) ?? 0n)), 0));
  if (waiting.size === 0) return;

  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, allowAutoTopicCreation: false, sessionTimeout: READER_SESSION_TIMEOUT_MS, heartbeatInterval: 1000 });
  let finish!: (err?: unknown) => void;
  const finished = new Promise<void>((resolve, reject) => (finish = (err) => (err ? reject(err) : resolve())));
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, isStale, heartbeat }) => {
        if (!waiting.has(batch.partition) || isStale() || batch.messages.length === 0) return;
        const high = end.get(batch.partition) ?? 0n;
        const first = start.get(batch.partition) ?? 0n;
        // The list group starts at the beginning: what the replay group already did is skipped here.
        const messages = batch.messages.filter((m) => BigInt(m.offset) >= first && BigInt(m.offset) < high);
        const last = BigInt(batch.lastOffset());
        try {
          let more = true;
          if (messages.length > 0) {
            const upTo = BigInt(messages[messages.length - 1].offset) + 1n;
            more = await onBatch(batch.partition, messages, async () => {
              await consumer.commitOffsets([{ topic, partition: batch.partition, offset: upTo.toString() }]);
            });
          }
          resolveOffset(last.toString());
          await heartbeat();
          if (last + 1n >= high) waiting.delete(batch.partition);
          if (!more || waiting.size === 0) finish();
        } catch (err) {
          finish(err);
        }
      },
    });
    await finished;
  } finally {
    await consumer.disconnect();
  }
}

function withoutDlqHeaders(headers: IHeaders | undefined): IHeaders {
  const out: IHeaders = Object.create(null) as IHeaders;
  for (const [k, v] of Object.entries(headers ?? {})) if (!k.startsWith('dlq-') && v !== undefined) out[k] = v;
  return out;
}

function entryOf(topic: string, partition: number, m: KafkaMessage): DeadLetterEntry {
  const h = (name: string) => headerString(m.headers, name);
  const num = (v: string | undefined) => (v === undefined || v === '' || Number.isNaN(Number(v)) ? undefined : Number(v));
  return {
    partition,
    offset: m.offset,
    key: m.key === null ? null : m.key.toString('utf8'),
    sourceTopic: h(DlqHeaders.topic) ?? topic.slice(0, -'.dlq'.length),
    sourcePartition: num(h(DlqHeaders.partition)),
    sourceOffset: h(DlqHeaders.offset),
    reason: h(DlqHeaders.reason),
    error: h(DlqHeaders.error),
    attempts: num(h(DlqHeaders.attempts)),
    group: h(DlqHeaders.group),
    time: h(DlqHeaders.timestamp) ?? new Date(Number(m.timestamp)).toISOString(),
    bytes: m.value?.length ?? 0,
  };
}

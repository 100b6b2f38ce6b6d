import { SpanStatusCode } from '@opentelemetry/api';
import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { ZodType } from 'zod';
import { DEFAULT_BACKOFF, backoffDelay, pauseDelay, sleep, type BackoffOptions } from './backoff';
import { decodeValue } from './codec';
import type { ConsumerRunner, ConsumerRunnerOptions } from './consumer-runner';
import { defaultDeadLetterTopic, type DeadLetterRecord } from './dead-letter';
import type { DeadLetterReason } from './headers';
import { asError } from './outcome';
import { createRunnerCore } from './runner-core';
import { isTransientStoreError } from './store-errors';
import { TopicSeries } from './topic-series';
import { batchSpan, requestIdsOf, tracingOn } from './trace-context';

/** One topic stored in batches: each valid message becomes (at most) one row. */
export interface SinkHandler<T, R> {
  topic: string;
  schema: ZodType<T>;
  /**
   * The row of a valid message, or undefined when it stores nothing. Synchronous (it runs as
   * messages arrive); a throw dead-letters the message at once (reason `rejected`): a pure
   * function fails the same way on every retry.
   */
  toRow(value: T): R | undefined;
  /**
   * Stores rows and resolves once they are durable. A failure retries the same rows with
   * backoff, so it must be idempotent (a redelivery after a crash writes them again too).
   */
  write(rows: R[]): Promise<void>;
  /** Defaults to `<topic>.dlq`. */
  deadLetterTopic?: string;
}

/** Builds a SinkHandler with `T` inferred from the schema. */
export function sinkHandler<T, R>(handler: SinkHandler<T, R>): SinkHandler<T, R> {
  return handler;
}

export interface SinkRunnerOptions extends Omit<ConsumerRunnerOptions, 'handlers' | 'concurrency' | 'deadLetterTopic'> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the runner never looks inside values or rows
  sink: SinkHandler<any, any>;
  /** Rows per write at most. Default 10,000. */
  maxRows?: number;
  /** How long the first row waits for others when the writer is idle. Default 50 ms. */
  lingerMs?: number;
  /** Fetching waits while this many rows are not stored yet. Default 3 × maxRows. */
  maxPendingRows?: number;
  /** How long stop() waits for what is pending to be stored and committed. Default 30 s. */
  stopTimeoutMs?: number;
}

/** Messages taken since the last cut, written (and then committed) together. */
class Segment<R> {
  readonly rows: R[] = [];
  /** The message of each row, for the dead-letter topic if the rows can never be stored. */
  readonly sources: Array<{ partition: number; message: KafkaMessage }> = [];
  readonly rejected: DeadLetterRecord[] = [];
  /** Last offset taken per partition: everything up to it is in this segment or an earlier one. */
  readonly offsets = new Map<number, string>();
  messages = 0;
}

/** The writer gave up because stop() ran out of time: nothing of the segment is committed. */
class Abandoned extends Error {}

/**
 * A consumer for sinks that store messages as rows in batches (e.g. ClickHouse `events`, a
 * ReplacingMergeTree keyed by event id).
 *
 * Order: rows reach `write` in the order they were taken, which per partition is offset order
 * (one writer, one write after the other, a failed write retried before the next). A crash or
 * rebalance replays from the last commit, so `write` must be idempotent for a replayed
 * sequence too. Messages of different partitions interleave in fetch order.
 *
 * Fetching and storing are decoupled. Each fetched batch is decoded, validated and turned into
 * rows synchronously, its offsets are resolved at once (that only moves kafkajs's fetch
 * position; auto-commit is off) and the next fetch starts while one writer stores the rows
 * taken so far in one `write` (up to maxRows). After a write succeeds the writer commits, per
 * partition, the last offset it covered, so a message is committed only once its row is stored
 * (or it is in the dead-letter topic). Writes grow with the load: rows gather while the
 * previous write is in flight, and an idle writer waits lingerMs for company.
 *
 * Why not the per-message runner: kafkajs fetches again only after every batch of the last
 * fetch is handled, and commits after every batch, so there a store write sits between two
 * fetches. On the development broker a fetch returns one producer request per partition
 * (~100 messages for ingest's batches), which made one ClickHouse insert of ~12 rows per
 * partition batch the ceiling: ~500-3,000 events/s, and ClickHouse slowed as the tiny parts
 * piled up (bench/scenarios/events-sink.ts).
 *
 * Failures: an invalid message (not JSON, not the schema) or a row that cannot be built is
 * dead-lettered with the segment; a write that failed because the store is down is retried until
 * it answers (ADR 0111), any other failed write with backoff (`backoff`), and after maxAttempts
 * the segment's messages are dead-lettered (`retries-exhausted`). While the writer
 * retries, fetching stops once maxPendingRows are waiting. Delivery is at-least-once.
 */
export function createSinkRunner(options: SinkRunnerOptions): ConsumerRunner {
  const handler = options.sink;
  const topic = handler.topic;
  const maxRows = options.maxRows ?? 10_000;
  const lingerMs = options.lingerMs ?? 50;
  const maxPendingRows = options.maxPendingRows ?? 3 * maxRows;
  const stopTimeoutMs = options.stopTimeoutMs ?? 30_000;
  const backoff: BackoffOptions = { ...DEFAULT_BACKOFF, ...options.backoff };
  const deadLetterTopic = handler.deadLetterTopic ?? defaultDeadLetterTopic(topic);
  const core = createRunnerCore(options);
  const { logger, group } = core;
  const series = new TopicSeries(core.metrics, group).of(topic);

  let open = new Segment<unknown>();
  const queue: Array<Segment<unknown>> = [];
  let pendingRows = 0;
  let linger: NodeJS.Timeout | undefined;
  let lingered = false;
  let writing: Promise<void> | undefined;
  let abandon = false;
  let broken = false;
  let progress: Array<() => void> = [];
  /** Stored but not yet committed, per partition (a failed commit is retried with the next one). */
  const uncommitted = new Map<number, string>();
  /** This member's partitions of the topic; undefined until the first join. */
  let assigned: Set<number> | undefined;

  const onGroupJoin = (consumer: Consumer): void => {
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      assigned = new Set(payload.memberAssignment[topic] ?? []);
      // A partition that moved is the new owner's to commit.
      for (const p of uncommitted.keys()) if (!assigned.has(p)) uncommitted.delete(p);
    });
  };

  const wakeWaiters = (): void => {
    const waiters = progress;
    progress = [];
    for (const w of waiters) w();
  };

  /** Moves the open segment to the writer's queue. */
  const cut = (): void => {
    clearTimeout(linger);
    linger = undefined;
    lingered = false;
    if (open.messages === 0) return;
    queue.push(open);
    open = new Segment();
    writing ??= drainQueue().finally(() => {
      writing = undefined;
      wakeWaiters();
      // Rows that lingered while the writer was busy go next.
      if (lingered || open.rows.length >= maxRows) cut();
    });
  };

  const onLinger = (): void => {
    linger = undefined;
    lingered = true;
    if (!writing) cut();
  };

  const drainQueue = async (): Promise<void> => {
    while (queue.length > 0 && !broken) {
      const segment = queue[0];
      try {
        await store(segment);
      } catch (err) {
        // Abandoned: stop() ran out of time; the rest is redelivered to the partitions' next owner.
        if (err instanceof Abandoned) return;
        // Anything else is a bug (store failures are retried, then dead-lettered). Committing
        // later segments would skip this one's messages for good: commit nothing more, stop
        // fetching (pendingRows stays up) and report unhealthy so the process restarts.
        broken = true;
        logger.error({ err: (err as Error).message, group, topic }, 'sink writer failed: nothing more is committed');
        return;
      }
      queue.shift();
      pendingRows -= segment.rows.length;
      wakeWaiters();
    }
  };

  /**
   * Retries `action` with backoff until it succeeds, `attempts` failures that are not the store
   * being down run out (returns the error) or stop() gives up. A transient store error pauses
   * the writer without bound (ADR 0111): fetching stops at maxPendingRows meanwhile.
   */
  const withRetries = async (what: string, count: number, attempts: number, action: () => Promise<void>): Promise<Error | undefined> => {
    let failures = 0;
    let paused: { since: number; probes: number } | undefined;
    const resume = (): void => {
      if (!paused) return;
      series.storePaused(false);
      logger.warn({ group, topic, pausedMs: Date.now() - paused.since, probes: paused.probes }, 'store answered: sink resumed');
      paused = undefined;
    };
    try {
      for (;;) {
        try {
          await action();
          return undefined;
        } catch (err) {
          const error = asError(err);
          series.failed.inc(count);
          if (abandon) throw new Abandoned(error.message);
          let delay: number;
          if (isTransientStoreError(error)) {
            if (!paused) {
              paused = { since: Date.now(), probes: 0 };
              series.storePaused(true);
              logger.warn({ group, topic, rows: count, err: error.message }, `store unavailable: ${what} paused, retrying until it answers`);
            }
            delay = pauseDelay(++paused.probes, backoff);
          } else {
            resume();
            if (++failures >= attempts) return error;
            delay = backoffDelay(failures, backoff);
            logger.warn({ group, topic, rows: count, attempt: failures, delay, err: error.message }, `${what} failed, retrying`);
          }
          await sleep(delay);
          if (abandon) throw new Abandoned(error.message);
        }
      }
    } finally {
      resume();
    }
  };

  const sendDeadLetters = async (records: DeadLetterRecord[]): Promise<void> => {
    // The dead-letter topic is where a message goes when all else failed: keep trying.
    await withRetries('dead-letter send', records.length, Number.POSITIVE_INFINITY, () => core.deadLetters.send(deadLetterTopic, records));
    const counts: Record<DeadLetterReason, number> = { invalid: 0, rejected: 0, 'retries-exhausted': 0 };
    for (const r of records) counts[r.reason]++;
    series.countDeadLetters(counts);
    logger.warn({ group, topic, count: records.length, firstError: records[0].error, reason: records[0].reason }, 'messages dead-lettered');
  };

  const store = async (segment: Segment<unknown>): Promise<void> => {
    const dead = [...segment.rejected];
    if (segment.rows.length > 0) {
      const headers = segment.sources.map((s) => s.message.headers);
      const span = tracingOn() ? batchSpan(topic, group, headers) : undefined;
      const error = await withRetries('sink write', segment.rows.length, backoff.maxAttempts, () => handler.write(segment.rows));
      if (span) {
        if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
        span.end();
      }
      if (error) {
        const text = `${error.name}: ${error.message}`;
        for (const s of segment.sources) dead.push(deadLetterRecord(s.partition, s.message, 'retries-exhausted', text, backoff.maxAttempts));
      } else {
        series.processed.inc(segment.rows.length);
        // One line per write, naming the requests behind it: a write can be followed from its 202 to the store (ADR 0187).
        logger.info({ group, topic, rows: segment.rows.length, requestIds: requestIdsOf(headers) }, 'sink rows written');
      }
    }
    if (dead.length > 0) await sendDeadLetters(dead);
    await commit(segment.offsets);
  };

  const commit = async (offsets: Map<number, string>): Promise<void> => {
    if (broken) return;
    for (const [p, o] of offsets) {
      const before = uncommitted.get(p);
      // After a rebalance the same partition can be taken again from an older offset: keep the furthest stored.
      if (before === undefined || BigInt(o) > BigInt(before)) uncommitted.set(p, o);
    }
    const entries = [...uncommitted].filter(([p]) => !assigned || assigned.has(p));
    if (entries.length === 0) return;
    try {
      await core.consumer.commitOffsets(entries.map(([partition, offset]) => ({ topic, partition, offset: (BigInt(offset) + 1n).toString() })));
      for (const [p, o] of entries) if (uncommitted.get(p) === o) uncommitted.delete(p);
    } catch (err) {
      // Stored anyway: the next commit carries these offsets, or a redelivery rewrites the rows.
      logger.warn({ group, topic, err: (err as Error).message }, 'sink offset commit failed');
    }
  };

  const deadLetterRecord = (partition: number, m: KafkaMessage, reason: DeadLetterReason, error: string, attempts: number): DeadLetterRecord => ({
    topic,
    partition,
    offset: m.offset,
    key: m.key,
    value: m.value,
    headers: m.headers,
    reason,
    error,
    attempts,
  });

  const take = (partition: number, m: KafkaMessage): void => {
    const segment = open;
    segment.messages++;
    segment.offsets.set(partition, m.offset);
    const decoded = decodeValue(m.value, handler.schema);
    if (!decoded.ok) {
      segment.rejected.push(deadLetterRecord(partition, m, 'invalid', decoded.error, 0));
      return;
    }
    let row: unknown;
    try {
      row = handler.toRow(decoded.value);
    } catch (err) {
      const error = asError(err);
      segment.rejected.push(deadLetterRecord(partition, m, 'rejected', `${error.name}: ${error.message}`, 1));
      return;
    }
    if (row === undefined) return;
    segment.rows.push(row);
    segment.sources.push({ partition, message: m });
    pendingRows++;
    if (segment.rows.length >= maxRows) cut();
  };

  let batchesInProgress = 0;
  let leaving = false;
  const eachBatch = async ({ batch, resolveOffset, heartbeat }: EachBatchPayload): Promise<void> => {
    if (batch.topic !== topic) throw new Error(`no sink for topic ${batch.topic}`);
    // Leaving: batches kafkajs fetched before the pause are left unresolved, for the next owner.
    if (leaving) return;
    batchesInProgress++;
    try {
      const started = process.hrtime.bigint();
      for (const m of batch.messages) take(batch.partition, m);
      // The batch's end may lie past its last message (transaction markers): the open segment covers it.
      if (open.messages > 0) open.offsets.set(batch.partition, batch.lastOffset());
      resolveOffset(batch.lastOffset());
      if (open.messages > 0) {
        if (!writing && open.rows.length === 0) cut(); // only dead letters or nothing to store: no need to wait
        else linger ??= setTimeout(onLinger, lingerMs);
      }
      series.batchDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
      series.setLag(batch.partition, batch.offsetLag());
      // Backpressure: the store is slow or down, stop fetching (keep the group membership).
      while (pendingRows >= maxPendingRows && (core.state === 'starting' || core.state === 'running')) {
        await Promise.race([new Promise<void>((resolve) => progress.push(resolve)), sleep(core.heartbeatIntervalMs)]);
        await heartbeat();
      }
    } finally {
      batchesInProgress--;
      if (batchesInProgress === 0) wakeWaiters();
    }
  };

  /** Stores and commits what was taken before leaving the group, within stopTimeoutMs. */
  const flushBeforeLeave = async (): Promise<void> => {
    leaving = true;
    core.consumer.pause([{ topic }]);
    const deadline = Date.now() + stopTimeoutMs;
    const waitProgress = () => Promise.race([new Promise<void>((resolve) => progress.push(resolve)), sleep(Math.max(0, Math.min(100, deadline - Date.now())))]);
    while (batchesInProgress > 0 && Date.now() < deadline) await waitProgress();
    cut();
    while ((writing || queue.length > 0) && Date.now() < deadline) await waitProgress();
    if (writing || queue.length > 0) {
      logger.warn({ group, topic, pendingRows }, 'sink stopped before storing everything: the rest is redelivered');
      abandon = true;
    }
  };

  return {
    start: () =>
      core.start([topic], {
        // Offsets are resolved as batches are taken (the fetch position) and committed by the writer.
        eachBatchAutoResolve: false,
        autoCommit: false,
        // Taking a batch is synchronous CPU work: more partitions at once would only interleave it.
        partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 1,
        eachBatch,
      }, onGroupJoin),
    stop: () =>
      core.stop({
        beforeLeave: flushBeforeLeave,
        afterStop: () => {
          clearTimeout(linger);
          abandon = true;
        },
      }),
    isHealthy: () => core.isHealthy() && !broken,
    get consumer() {
      return core.consumer;
    },
  };
}

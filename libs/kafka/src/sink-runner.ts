import { type Consumer, type EachBatchPayload, KafkaJSNonRetriableError } from 'kafkajs';
import type { ZodType } from 'zod';
import { DEFAULT_BACKOFF } from './backoff';
import type { ConsumerRunner, ConsumerRunnerOptions } from './consumer-runner';
import { defaultDeadLetterTopic } from './dead-letter';
import { createRunnerCore, type RunnerCore } from './runner-core';
import { OffsetCommits } from './sink/offset-commits';
import { Progress } from './sink/progress';
import { SegmentTaker } from './sink/segment-taker';
import { SinkWriter } from './sink/sink-writer';
import { StoreRetry } from './sink/store-retry';
import { TopicSeries } from './topic-series';

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

/**
 * A consumer for sinks that store messages as rows in batches (e.g. ClickHouse `events`, a
 * ReplacingMergeTree keyed by event id).
 *
 * Order: rows reach `write` in the order they were taken, which per partition is offset order
 * (one writer, one write after the other, a failed write retried before the next). A crash or
 * rebalance replays from the last commit, so `write` must be idempotent for a replayed
 * sequence too. A rebalance holds the writer from its start to the group's join, which drops
 * the rows taken of partitions that moved away and not written yet: only the write in flight
 * at its start overlaps the new owner's (ADR 0339). Messages of different partitions
 * interleave in fetch order.
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
  return new SinkRunner(options);
}

class SinkRunner implements ConsumerRunner {
  private readonly core: RunnerCore;
  private readonly topic: string;
  private readonly deadLetterTopic: string;
  private readonly progress = new Progress();
  private readonly commits: OffsetCommits;
  private readonly taker: SegmentTaker;
  private readonly writer: SinkWriter;
  private readonly series: ReturnType<TopicSeries['of']>;
  private readonly maxPendingRows: number;
  private readonly stopTimeoutMs: number;
  private abandon = false;
  private batchesInProgress = 0;
  private leaving = false;

  constructor(private readonly options: SinkRunnerOptions) {
    const handler = options.sink;
    const maxRows = options.maxRows ?? 10_000;
    this.topic = handler.topic;
    this.deadLetterTopic = handler.deadLetterTopic ?? defaultDeadLetterTopic(this.topic);
    this.maxPendingRows = options.maxPendingRows ?? 3 * maxRows;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 30_000;
    this.core = createRunnerCore(options);
    const { logger, group } = this.core;
    this.series = new TopicSeries(this.core.metrics, group).of(this.topic);
    const ctx = { group, topic: this.topic, logger, series: this.series, backoff: { ...DEFAULT_BACKOFF, ...options.backoff } };
    this.commits = new OffsetCommits(ctx, () => this.core.consumer);
    this.taker = new SegmentTaker(handler, maxRows, options.lingerMs ?? 50);
    this.writer = new SinkWriter(
      {
        ...ctx,
        deadLetterTopic: this.deadLetterTopic,
        deadLetters: this.core.deadLetters,
        write: (rows) => handler.write(rows),
      },
      new StoreRetry(ctx, () => this.abandon),
      this.commits,
      this.progress,
      () => this.taker.writerIdle(),
    );
    this.taker.feeds(this.writer);
  }

  get consumer(): Consumer {
    return this.core.consumer;
  }

  start(): Promise<void> {
    return this.core.start(
      [this.topic],
      [this.deadLetterTopic],
      {
        // Offsets are resolved as batches are taken (the fetch position) and committed by the writer.
        eachBatchAutoResolve: false,
        autoCommit: false,
        // Taking a batch is synchronous CPU work: more partitions at once would only interleave it.
        partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently ?? 1,
        eachBatch: (payload) => this.eachBatch(payload),
      },
      (consumer) => {
        this.commits.listen(consumer);
        consumer.on(consumer.events.REBALANCING, () => this.writer.holdForRebalance());
        consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => this.keepAssigned(new Set(payload.memberAssignment[this.topic] ?? [])));
      },
    );
  }

  stop(): Promise<void> {
    return this.core.stop({
      beforeLeave: () => this.flushBeforeLeave(),
      afterStop: () => {
        this.taker.close();
        this.abandon = true;
        // Out of the group: what is still queued (stop ran out of time) is the next owner's.
        this.keepAssigned(new Set());
      },
    });
  }

  isHealthy(): boolean {
    return this.core.isHealthy() && !this.writer.broken;
  }

  private async eachBatch({ batch, resolveOffset, heartbeat }: EachBatchPayload): Promise<void> {
    if (batch.topic !== this.topic) throw new Error(`no sink for topic ${batch.topic}`);
    // Leaving: batches kafkajs fetched before the pause are left unresolved, for the next owner.
    if (this.leaving) return;
    this.batchesInProgress++;
    try {
      const started = process.hrtime.bigint();
      for (const m of batch.messages) this.taker.take(batch.partition, m);
      this.taker.endBatch(batch.partition, batch.lastOffset());
      resolveOffset(batch.lastOffset());
      this.series.batchDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
      this.series.setLag(batch.partition, batch.offsetLag());
      await this.holdWhileBehind(heartbeat);
    } finally {
      this.batchesInProgress--;
      if (this.batchesInProgress === 0) this.progress.wake();
    }
  }

  /**
   * The group's join: what was taken of partitions that moved away and not stored yet is left to
   * their new owner, who reads it again from the last commit; the writer goes on (ADR 0339).
   */
  private keepAssigned(assigned: ReadonlySet<number>): void {
    this.taker.keepOnly(assigned);
    this.writer.keepOnly(assigned);
    this.progress.wake();
  }

  /** Backpressure: the store is slow or down, stop fetching (keep the group membership). */
  private async holdWhileBehind(heartbeat: () => Promise<void>): Promise<void> {
    while (this.writer.pendingRows >= this.maxPendingRows && (this.core.state === 'starting' || this.core.state === 'running')) {
      await this.progress.wait(this.core.heartbeatIntervalMs);
      await heartbeat();
    }
  }

  /** Stores and commits what was taken before leaving the group, within stopTimeoutMs. */
  private async flushBeforeLeave(): Promise<void> {
    this.leaving = true;
    try {
      this.core.consumer.pause([{ topic: this.topic }]);
    } catch (error) {
      // Between a crash and kafkajs's restart the consumer has no group and fetches nothing: the
      // stop goes on to store what was taken (kafkajs throws its non-retriable "not initialized").
      if (!(error instanceof KafkaJSNonRetriableError)) throw error;
    }
    const deadline = Date.now() + this.stopTimeoutMs;
    const waitProgress = () => this.progress.wait(Math.min(100, deadline - Date.now()));
    while (this.batchesInProgress > 0 && Date.now() < deadline) await waitProgress();
    this.taker.cut();
    while (this.writer.busy && Date.now() < deadline) await waitProgress();
    if (this.writer.busy) {
      this.core.logger.warn({ group: this.core.group, topic: this.topic, pendingRows: this.writer.pendingRows }, 'sink stopped before storing everything: the rest is redelivered');
      this.abandon = true;
    }
  }
}

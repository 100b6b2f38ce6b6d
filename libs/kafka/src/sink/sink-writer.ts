import { safeErrorMessage } from '@meld/contracts';
import { SpanStatusCode } from '@opentelemetry/api';
import type { BackoffOptions } from '../backoff';
import type { DeadLetterRecord, DeadLetterSink } from '../dead-letter';
import type { DeadLetterReason } from '../headers';
import type { Logger } from '../logger';
import type { TopicSeries } from '../topic-series';
import { batchSpan, requestIdsOf, tracingOn } from '../trace-context';
import type { OffsetCommits } from './offset-commits';
import type { Progress } from './progress';
import { Abandoned, type Segment, sinkDeadLetter } from './segment';
import type { StoreRetry } from './store-retry';

export interface SinkWriterContext {
  group: string;
  topic: string;
  logger: Logger;
  series: ReturnType<TopicSeries['of']>;
  backoff: BackoffOptions;
  deadLetterTopic: string;
  deadLetters: DeadLetterSink;
  write: (rows: unknown[]) => Promise<void>;
}

/**
 * The one writer of a sink: stores the queued segments in order, dead-letters what cannot be
 * stored, then commits each segment's offsets. A bug (anything but a store failure) breaks it:
 * committing later segments would skip the failed one's messages for good.
 */
export class SinkWriter {
  /** Rows taken and not stored yet (backpressure). */
  pendingRows = 0;
  broken = false;
  private readonly queue: Segment[] = [];
  private writing: Promise<void> | undefined;
  /** From a rebalance's start to the group's join: resolves when writes may go on. */
  private rebalance: { joined: Promise<void>; join: () => void } | undefined;

  constructor(
    private readonly ctx: SinkWriterContext,
    private readonly retry: StoreRetry,
    private readonly commits: OffsetCommits,
    private readonly progress: Progress,
    /** Called each time the writer goes idle (rows that lingered meanwhile go next). */
    private readonly onIdle: () => void,
  ) {}

  get writingNow(): boolean {
    return this.writing !== undefined;
  }

  /** Something is queued or being stored. */
  get busy(): boolean {
    return this.writing !== undefined || this.queue.length > 0;
  }

  /**
   * The group is rebalancing: this member's partitions are revoked until the join says which it
   * keeps, so no write (nor a retry's next attempt) starts until keepOnly (ADR 0339).
   */
  holdForRebalance(): void {
    if (this.rebalance) return;
    let join!: () => void;
    const joined = new Promise<void>((resolve) => (join = resolve));
    this.rebalance = { joined, join };
  }

  /**
   * The group's join: the queued segments keep only the rows, dead letters and offsets of `kept`
   * partitions, and writes go on. The others are their new owner's, who reads them again from
   * the last commit: writing them here too would run two writes of one key at once (ADR 0339).
   * The write in flight finishes with the rows it was given; a retry of it writes the kept ones.
   */
  keepOnly(kept: ReadonlySet<number>): void {
    for (const segment of this.queue) this.pendingRows -= segment.keepOnly(kept);
    this.rebalance?.join();
    this.rebalance = undefined;
  }

  enqueue(segment: Segment): void {
    this.queue.push(segment);
    this.writing ??= this.drain().finally(() => {
      this.writing = undefined;
      this.progress.wake();
      this.onIdle();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.broken) {
      const segment = this.queue[0];
      try {
        await this.store(segment);
      } catch (err) {
        // Abandoned: stop() ran out of time; the rest is redelivered to the partitions' next owner.
        if (err instanceof Abandoned) return;
        // Anything else is a bug: commit nothing more, stop fetching (pendingRows stays up) and
        // report unhealthy so the process restarts.
        this.broken = true;
        this.ctx.logger.error({ err: safeErrorMessage(err), group: this.ctx.group, topic: this.ctx.topic }, 'sink writer failed: nothing more is committed');
        return;
      }
      this.queue.shift();
      this.pendingRows -= segment.rows.length;
      this.progress.wake();
    }
  }

  private async store(segment: Segment): Promise<void> {
    await this.joined();
    const failed = segment.rows.length > 0 ? await this.writeRows(segment) : [];
    // Read after the write: a rebalance meanwhile drops the dead letters of partitions that moved.
    const dead = [...segment.rejected, ...failed];
    if (dead.length > 0) await this.sendDeadLetters(dead);
    // No offsets left: a rebalance moved every partition of the segment away.
    if (!this.broken && segment.offsets.size > 0) await this.commits.commit(segment.offsets);
  }

  /** Writes the segment's rows; the dead letters of its messages when retries ran out. */
  private async writeRows(segment: Segment): Promise<DeadLetterRecord[]> {
    const { group, topic, logger, series, backoff } = this.ctx;
    const headers = segment.sources.map((s) => s.message.headers);
    const span = tracingOn() ? batchSpan(topic, group, headers) : undefined;
    const error = await this.retry.run('sink write', segment.rows.length, backoff.maxAttempts, async () => {
      // A retry after a rebalance writes only the rows of partitions still this member's.
      await this.joined();
      if (segment.rows.length > 0) await this.ctx.write(segment.rows);
    });
    if (span) {
      if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: safeErrorMessage(error) });
      span.end();
    }
    if (segment.rows.length === 0) return [];
    if (error) {
      // The reason is logged (messagesDeadLettered): not a store's text quoting the rows (ADR 0338).
      const text = `${error.name}: ${safeErrorMessage(error)}`;
      return segment.sources.map((s) => sinkDeadLetter(topic, s.partition, s.message, 'retries-exhausted', text, backoff.maxAttempts));
    }
    series.processed.inc(segment.rows.length);
    // One line per write, naming the requests behind it: a write can be followed from its 202 to the store (ADR 0187).
    logger.info({ group, topic, rows: segment.rows.length, requestIds: requestIdsOf(headers) }, 'sink rows written');
    return [];
  }

  private async joined(): Promise<void> {
    while (this.rebalance) await this.rebalance.joined;
  }

  private async sendDeadLetters(records: DeadLetterRecord[]): Promise<void> {
    const { group, topic, logger, series, deadLetterTopic, deadLetters } = this.ctx;
    // The dead-letter topic is where a message goes when all else failed: keep trying.
    await this.retry.run('dead-letter send', records.length, Number.POSITIVE_INFINITY, () => deadLetters.send(deadLetterTopic, records));
    const counts: Record<DeadLetterReason, number> = { invalid: 0, rejected: 0, 'retries-exhausted': 0 };
    for (const r of records) counts[r.reason]++;
    series.countDeadLetters(counts);
    logger.warn({ group, topic, count: records.length, firstError: records[0].error, reason: records[0].reason }, 'messages dead-lettered');
  }
}

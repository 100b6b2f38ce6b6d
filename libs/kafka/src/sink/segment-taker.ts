import { safeErrorMessage } from '@meld/contracts';
import type { KafkaMessage } from 'kafkajs';
import { decodeValue } from '../codec';
import { asError } from '../outcome';
import type { SinkHandler } from '../sink-runner';
import { Segment, sinkDeadLetter } from './segment';
import type { SinkWriter } from './sink-writer';

/**
 * Turns fetched messages into rows of the open segment and decides when to cut it for the
 * writer: at maxRows, when the writer goes idle after rows lingered, or lingerMs after the first
 * row when the writer is idle.
 */
export class SegmentTaker {
  private open = new Segment();
  private linger: NodeJS.Timeout | undefined;
  private lingered = false;
  // Set once: the writer and the taker refer to each other (a write's end may cut the next segment).
  private writer!: SinkWriter;

  constructor(
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the runner never looks inside values or rows
    private readonly handler: SinkHandler<any, any>,
    private readonly maxRows: number,
    private readonly lingerMs: number,
  ) {}

  feeds(writer: SinkWriter): void {
    this.writer = writer;
  }

  /** Decodes one message into the open segment: a row, nothing, or a dead letter. */
  take(partition: number, m: KafkaMessage): void {
    const segment = this.open;
    segment.messages++;
    segment.offsets.set(partition, m.offset);
    const row = this.rowOf(segment, partition, m);
    if (row === undefined) return;
    segment.rows.push(row);
    segment.sources.push({ partition, message: m });
    this.writer.pendingRows++;
    if (segment.rows.length >= this.maxRows) this.cut();
  }

  private rowOf(segment: Segment, partition: number, m: KafkaMessage): unknown {
    const topic = this.handler.topic;
    const decoded = decodeValue(m.value, this.handler.schema);
    if (!decoded.ok) {
      segment.rejected.push(sinkDeadLetter(topic, partition, m, 'invalid', decoded.error, 0));
      return undefined;
    }
    try {
      return this.handler.toRow(decoded.value);
    } catch (err) {
      const error = asError(err);
      segment.rejected.push(sinkDeadLetter(topic, partition, m, 'rejected', `${error.name}: ${safeErrorMessage(error)}`, 1));
      return undefined;
    }
  }

  /** After a rebalance: the open segment keeps only the rows of `kept` partitions (SinkWriter.keepOnly). */
  keepOnly(kept: ReadonlySet<number>): void {
    this.writer.pendingRows -= this.open.keepOnly(kept);
  }

  /** A partition batch was taken up to `lastOffset`: cut now or let rows linger. */
  endBatch(partition: number, lastOffset: string): void {
    if (this.open.messages === 0) return;
    // The batch's end may lie past its last message (transaction markers): the open segment covers it.
    this.open.offsets.set(partition, lastOffset);
    if (!this.writer.writingNow && this.open.rows.length === 0) this.cut(); // only dead letters or nothing to store: no need to wait
    else this.linger ??= setTimeout(() => this.onLinger(), this.lingerMs);
  }

  /** Moves the open segment to the writer's queue. */
  cut(): void {
    clearTimeout(this.linger);
    this.linger = undefined;
    this.lingered = false;
    if (this.open.messages === 0) return;
    const segment = this.open;
    this.open = new Segment();
    this.writer.enqueue(segment);
  }

  /** The writer went idle: rows that lingered while it was busy go next. */
  writerIdle(): void {
    if (this.lingered || this.open.rows.length >= this.maxRows) this.cut();
  }

  close(): void {
    clearTimeout(this.linger);
  }

  private onLinger(): void {
    this.linger = undefined;
    this.lingered = true;
    if (!this.writer.writingNow) this.cut();
  }
}

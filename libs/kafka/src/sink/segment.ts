import type { KafkaMessage } from 'kafkajs';
import type { DeadLetterReason } from '../headers';
import type { DeadLetterRecord } from '../dead-letter';

/** Messages taken since the last cut, written (and then committed) together. */
export class Segment<R = unknown> {
  rows: R[] = [];
  /** The message of each row, for the dead-letter topic if the rows can never be stored. */
  sources: Array<{ partition: number; message: KafkaMessage }> = [];
  rejected: DeadLetterRecord[] = [];
  /** Last offset taken per partition: everything up to it is in this segment or an earlier one. */
  readonly offsets = new Map<number, string>();
  messages = 0;

  /**
   * Drops what came from partitions outside `kept` (a rebalance moved them away, ADR 0339);
   * returns the number of rows dropped. The arrays are replaced, not changed: a write in flight
   * keeps the rows it was given, and its next attempt takes the kept ones.
   */
  keepOnly(kept: ReadonlySet<number>): number {
    const before = this.rows.length;
    const keep = this.sources.map((s) => kept.has(s.partition));
    this.rows = this.rows.filter((_, i) => keep[i]);
    this.sources = this.sources.filter((_, i) => keep[i]);
    this.rejected = this.rejected.filter((r) => kept.has(r.partition));
    for (const p of [...this.offsets.keys()]) if (!kept.has(p)) this.offsets.delete(p);
    // Every message taken sets its partition's offset: none left, nothing taken.
    if (this.offsets.size === 0) this.messages = 0;
    return before - this.rows.length;
  }
}

/** The writer gave up because stop() ran out of time: nothing of the segment is committed. */
export class Abandoned extends Error {}

export function sinkDeadLetter(topic: string, partition: number, m: KafkaMessage, reason: DeadLetterReason, error: string, attempts: number): DeadLetterRecord {
  return { topic, partition, offset: m.offset, key: m.key, value: m.value, headers: m.headers, reason, error, attempts };
}

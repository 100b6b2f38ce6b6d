import type { KafkaMessage } from 'kafkajs';
import type { DeadLetterReason } from '../headers';
import type { DeadLetterRecord } from '../dead-letter';

/** Messages taken since the last cut, written (and then committed) together. */
export class Segment<R = unknown> {
  readonly rows: R[] = [];
  /** The message of each row, for the dead-letter topic if the rows can never be stored. */
  readonly sources: Array<{ partition: number; message: KafkaMessage }> = [];
  readonly rejected: DeadLetterRecord[] = [];
  /** Last offset taken per partition: everything up to it is in this segment or an earlier one. */
  readonly offsets = new Map<number, string>();
  messages = 0;
}

/** The writer gave up because stop() ran out of time: nothing of the segment is committed. */
export class Abandoned extends Error {}

export function sinkDeadLetter(topic: string, partition: number, m: KafkaMessage, reason: DeadLetterReason, error: string, attempts: number): DeadLetterRecord {
  return { topic, partition, offset: m.offset, key: m.key, value: m.value, headers: m.headers, reason, error, attempts };
}

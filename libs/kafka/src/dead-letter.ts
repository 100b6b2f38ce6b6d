import type { IHeaders, Message } from 'kafkajs';
import { DlqHeaders, type DeadLetterReason } from './headers';

/** Where a dead-lettered message came from, and why it is there. */
export interface DeadLetterRecord {
  topic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: IHeaders;
  reason: DeadLetterReason;
  error: string;
  attempts: number;
}

/** Sends dead-letter records; resolves only once the brokers acknowledged them (acks -1). */
export interface DeadLetterSink {
  send(dlqTopic: string, records: DeadLetterRecord[]): Promise<void>;
}

/** Kafka headers are small; an unbounded stack trace in one could exceed the broker's message size. */
const MAX_ERROR_CHARS = 4000;

/**
 * The dead-letter message: the original key, value (bytes untouched, so an unparseable
 * value is kept as it was) and headers, plus `dlq-*` headers naming the source and the error.
 */
export function deadLetterMessage(record: DeadLetterRecord, group: string, now: Date = new Date()): Message {
  const error = record.error.length > MAX_ERROR_CHARS ? `${record.error.slice(0, MAX_ERROR_CHARS)}…` : record.error;
  return {
    key: record.key,
    value: record.value,
    headers: {
      ...record.headers,
      [DlqHeaders.reason]: record.reason,
      [DlqHeaders.error]: error,
      [DlqHeaders.topic]: record.topic,
      [DlqHeaders.partition]: String(record.partition),
      [DlqHeaders.offset]: record.offset,
      [DlqHeaders.attempts]: String(record.attempts),
      [DlqHeaders.group]: group,
      [DlqHeaders.timestamp]: now.toISOString(),
    },
  };
}

/** `<topic>.dlq`, the convention of system design §1 (contracts' `dlqTopic` spells the same). */
export function defaultDeadLetterTopic(topic: string): string {
  return `${topic}.dlq`;
}

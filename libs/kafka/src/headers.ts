import type { IHeaders } from 'kafkajs';

/** Header carrying the version of the value's schema (contracts own the versions). */
export const SCHEMA_VERSION_HEADER = 'schema-version';

/**
 * Dead-letter headers (PostHog's `dlq-*` names): enough to find the original message and
 * to see why it failed without a log search.
 */
export const DlqHeaders = {
  reason: 'dlq-reason',
  error: 'dlq-error',
  topic: 'dlq-topic',
  partition: 'dlq-partition',
  offset: 'dlq-offset',
  attempts: 'dlq-attempts',
  group: 'dlq-group',
  timestamp: 'dlq-timestamp',
} as const;

/** Why a message went to the dead-letter topic. */
export type DeadLetterReason = 'invalid' | 'rejected' | 'retries-exhausted';

/** kafkajs gives header values as Buffer, string, arrays of those, or undefined. */
export function headerString(headers: IHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  if (v === undefined) return undefined;
  const first = Array.isArray(v) ? v[0] : v;
  return first === undefined ? undefined : first.toString();
}

import { traceHeaders } from '@meld/kafka';

/**
 * The `trace` column of an outbox row written now (ADR 0213): the W3C `traceparent` (tracing on)
 * and the request id of the work in progress, as the Kafka headers the relay will send them as;
 * null outside any request or message. A JSON parameter for the writer's INSERT.
 */
export function outboxTrace(): string | null {
  const headers = traceHeaders();
  return headers ? JSON.stringify(headers) : null;
}

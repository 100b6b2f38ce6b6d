import type { TopicOutput } from '@meld/contracts';

/** A row of an outbox table (`sms_outbox`, `outbox`): its topic, partition key and message. */
export type OutboxRow<T = unknown> = {
  topic: string;
  key: string;
  value: T;
};

/**
 * The outbox row of a message, validated and keyed by its topic's output (ADR 0236): a bad
 * message throws in the writer's transaction rather than blocking the relay after COMMIT.
 */
export function outboxRow<T>(output: TopicOutput<T>, value: NoInfer<T>): OutboxRow<T> {
  const message = output.schema.parse(value);
  return { topic: output.topic, key: output.key(message), value: message };
}

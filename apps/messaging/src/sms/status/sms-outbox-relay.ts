import { Outputs } from '@meld/contracts';
import { OutboxRelay, outboxRelayProvider } from '@meld/db';
import { KAFKA, metricsRegistry } from '@meld/platform';

/**
 * Publishes `sms_outbox` after each status change committed: the change to `meld.sms-status.v1`
 * (ADR 0154) and its timeline event to `meld.events.v1` (ADR 0157), each row to its `topic`.
 * A table of its own, so messaging never depends on another app's relay running.
 */
export class SmsOutboxRelay extends OutboxRelay {}

export const smsOutboxRelay = outboxRelayProvider(SmsOutboxRelay, {
  table: 'sms_outbox',
  outputs: [Outputs.smsStatus, Outputs.events],
  producer: { kafka: KAFKA, clientId: 'meld-messaging' },
  metrics: metricsRegistry,
});

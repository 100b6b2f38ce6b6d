import { Outputs } from '@meld/contracts';
import { OutboxRelay, outboxRelayProvider } from '@meld/db';
import { KAFKA, metricsRegistry } from '@meld/platform';

/**
 * A pass that published waits this long before the next (ADR 0296): under load every send batch
 * and status batch nudged a pass of its own (five statements and a produce request for a few
 * rows); a pass after a quiet spell still runs at once.
 */
const SMS_OUTBOX_LINGER_MS = 25;

/**
 * Publishes `sms_outbox` after each status change committed: the change to `meld.sms-status.v1`
 * (ADR 0154), each row to its `topic`. A table of its own, so messaging never depends on another
 * app's relay running. Timeline events (ADR 0157) go through the shared `outbox` now, ordered
 * with their contact's erase marker (ADR 0039); `meld.events.v1` stays an output for the rows
 * queued here before.
 */
export class SmsOutboxRelay extends OutboxRelay {}

export const smsOutboxRelay = outboxRelayProvider(SmsOutboxRelay, {
  table: 'sms_outbox',
  outputs: [Outputs.smsStatus, Outputs.events],
  producer: { kafka: KAFKA, clientId: 'meld-messaging' },
  metrics: metricsRegistry,
  lingerMs: SMS_OUTBOX_LINGER_MS,
});

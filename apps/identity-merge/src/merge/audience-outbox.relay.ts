import { Outputs } from '@meld/contracts';
import { OutboxRelay, outboxRelayProvider } from '@meld/db';
import { KAFKA, metricsRegistry } from '@meld/platform';

/**
 * Publishes `audience_outbox` to `meld.audience.v1` after the merge transactions commit.
 * A table of its own so the merge never depends on the ingest app running.
 */
export class AudienceOutboxRelay extends OutboxRelay {}

export const audienceOutboxRelay = outboxRelayProvider(AudienceOutboxRelay, {
  table: 'audience_outbox',
  topic: Outputs.audience.topic,
  outputs: [Outputs.audience],
  producer: { kafka: KAFKA, clientId: 'meld-identity-merge' },
  metrics: metricsRegistry,
});

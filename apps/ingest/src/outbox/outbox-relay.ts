import { OutboxRelay as Relay, outboxRelayProvider } from '@meld/db';
import { metricsRegistry } from '@meld/platform';
import { IngestProducer } from './ingest-producer';

/** Publishes ingest's `outbox` (contact changes, erasures) through the app's producer (ADR 0211). */
export class OutboxRelay extends Relay {}

export const outboxRelay = outboxRelayProvider(OutboxRelay, {
  table: 'outbox',
  producer: { shared: IngestProducer },
  metrics: metricsRegistry,
  // 100 ms of linger: at ~1,900 contacts/s that makes produce requests of ~200 contacts
  // instead of one per write (~100), and identity-merge steps as big; without it the merge
  // fell behind at half of its peak on the development broker (ADR 0090).
  lingerMs: 100,
});

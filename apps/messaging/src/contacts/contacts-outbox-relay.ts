import { OutboxRelay, outboxRelayProvider } from '@meld/db';
import { KAFKA, metricsRegistry } from '@meld/platform';

/**
 * Drains the shared `outbox` (contact changes and events of the `meld-messaging` data
 * source, as ingest's) so messaging does not depend on ingest running (ADR 0181). The pump's
 * advisory lock lets one pump of the table drain at a time, ingest's or this one, so rows of
 * one key still leave in order.
 */
export class ContactsOutboxRelay extends OutboxRelay {}

export const contactsOutboxRelay = outboxRelayProvider(ContactsOutboxRelay, {
  table: 'outbox',
  producer: { kafka: KAFKA, clientId: 'meld-messaging-contacts' },
  metrics: metricsRegistry,
});

import { loadConfig } from '@meld/platform';
import { z } from 'zod';

/**
 * What this messaging process runs (ADR 0253). `all`: everything, one process (the local
 * stack, the tests, a small deployment). `api`: the HTTP routes (sends, reads, links, the
 * unsubscribe page); it stores and queues messages and relays its outbox rows, but submits
 * nothing. `delivery`: the send worker and its SMPP session (receipts, inbound keywords), the
 * recovery sweep, the webhook attempts and the redaction of deleted contacts' messages (ADR 0358).
 * Requests and delivery then use a core each and scale as separate Deployments.
 */
export type MessagingRole = 'all' | 'api' | 'delivery';

export function messagingRole(): MessagingRole {
  return loadConfig(z.object({ MELD_MESSAGING_ROLE: z.enum(['all', 'api', 'delivery']).default('all') })).MELD_MESSAGING_ROLE;
}

/** Whether this process submits SMS, reads receipts and sends webhooks. */
export function delivers(role: MessagingRole = messagingRole()): boolean {
  return role !== 'api';
}

import { z } from 'zod';
import { attributePatch, id, isoTimestamp } from './common';

/**
 * `meld.events.v1` carries two messages, both keyed `project/datasource/userId` so a source
 * contact's events and the erasure that ends them share a partition, in order.
 *
 * An accepted event, deduplicated downstream by (projectId, eventId). `automation` is true
 * when ingest decided the event starts automations (its type is `automation: true` and
 * |eventDate − receivedAt| ≤ 1 h, ingest spec rule 4); identity-merge turns those into
 * `meld.automation-triggers.v1` once it knows the audience contact. Absent means false
 * (events produced before the flag existed).
 */
export const eventAccepted = z.object({
  schemaVersion: z.literal(1),
  projectId: id,
  dataSourceId: id,
  userId: id,
  eventId: id,
  eventType: id,
  eventDate: isoTimestamp,
  receivedAt: isoTimestamp,
  parameters: z.record(z.string(), z.unknown()),
  userData: attributePatch.optional(),
  automation: z.boolean().optional(),
});
export type EventAccepted = z.infer<typeof eventAccepted>;

/**
 * The source contact was deleted (`meld.contacts.v1` delete of the same `version`): every
 * event of it stored so far is to be forgotten. Ingest produces it in the delete's transaction,
 * before the COMMIT, while it holds the contact row (ADR 0039): after every event of the contact
 * it acknowledged (an event write holds the contact row until its produce is acknowledged) and
 * before any event of a contact re-created later, so a consumer that applies it in partition
 * order erases exactly the old events.
 */
export const eventsErased = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal('erase'),
  projectId: id,
  dataSourceId: id,
  userId: id,
  version: z.number().int().nonnegative(),
  at: isoTimestamp,
});
export type EventsErased = z.infer<typeof eventsErased>;

/** Any `meld.events.v1` value; an accepted event has no `kind`. */
export const eventsMessage = z.union([eventAccepted, eventsErased]);
export type EventsMessage = z.infer<typeof eventsMessage>;

export function isEventsErased(m: EventsMessage): m is EventsErased {
  return 'kind' in m && m.kind === 'erase';
}

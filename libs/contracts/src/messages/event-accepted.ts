import { z } from 'zod';
import { attributePatch, id, isoTimestamp } from './common';

/** `meld.events.v1`: an accepted event, deduplicated downstream by (projectId, eventId). */
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
});
export type EventAccepted = z.infer<typeof eventAccepted>;

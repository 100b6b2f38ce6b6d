import { z } from 'zod';
import { id, isoTimestamp } from './common';

/**
 * `meld.automation-triggers.v1`: an event of an `automation: true` type within ±1 h of reception.
 * Ingest does not know the audience contact when it accepts the event: it sets
 * `sourceContactKey` (`keys.sourceContact`, also the message key) and puts the same key in
 * `audienceId`; a consumer resolves it to the audience contact through identity-merge.
 */
export const automationTrigger = z.object({
  schemaVersion: z.literal(1),
  projectId: id,
  audienceId: id,
  /** `project/datasource/userId` of the source contact, when the audience id is not resolved yet. */
  sourceContactKey: id.optional(),
  eventId: id,
  eventType: id,
  eventDate: isoTimestamp,
  receivedAt: isoTimestamp,
  parameters: z.record(z.string(), z.unknown()),
});
export type AutomationTrigger = z.infer<typeof automationTrigger>;

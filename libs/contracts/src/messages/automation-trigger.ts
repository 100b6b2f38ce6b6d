import { z } from 'zod';
import { id, isoTimestamp } from './common';

/** `meld.automation-triggers.v1`: an event of an `automation: true` type within ±1 h of reception. */
export const automationTrigger = z.object({
  schemaVersion: z.literal(1),
  projectId: id,
  audienceId: id,
  eventId: id,
  eventType: id,
  eventDate: isoTimestamp,
  receivedAt: isoTimestamp,
  parameters: z.record(z.string(), z.unknown()),
});
export type AutomationTrigger = z.infer<typeof automationTrigger>;

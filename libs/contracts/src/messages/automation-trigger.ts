import { z } from 'zod';
import { id, isoTimestamp } from './common';

/**
 * `meld.automation-triggers.v1`, keyed `project/audienceId`: an event that starts automations
 * (`meld.events.v1` with `automation: true`), published by identity-merge once the source
 * contact that sent it belongs to an audience contact. `audienceId` is that audience
 * contact's id when the trigger was resolved (it may be absorbed later: it then resolves to
 * the survivor through the audience aliases). Delivery is at-least-once: a consumer drops a
 * repeated (projectId, eventId).
 */
export const automationTrigger = z.object({
  schemaVersion: z.literal(1),
  projectId: id,
  audienceId: z.uuid(),
  /** The source contact that sent the event. */
  dataSourceId: id,
  userId: id,
  eventId: id,
  eventType: id,
  eventDate: isoTimestamp,
  receivedAt: isoTimestamp,
  parameters: z.record(z.string(), z.unknown()),
});
export type AutomationTrigger = z.infer<typeof automationTrigger>;

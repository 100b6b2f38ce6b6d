import { z } from 'zod';
import { attributeValue, id, isoTimestamp } from './common';

/**
 * `meld.audience.v1`, published by identity-merge after each committed merge step.
 * `snapshot` is the full audience contact (consumers upsert by version); `merge` says
 * which audience ids were absorbed into the survivor; `tombstone` removes one.
 */
const base = { schemaVersion: z.literal(1), projectId: id, audienceId: id, version: z.number().int().nonnegative(), at: isoTimestamp };

/**
 * `<dataSourceId>/<userId>` of the source contacts that belonged to this audience contact
 * before the step and no longer do (moved to another one, or deleted); every member for a
 * tombstone. Optional (added later, schema version unchanged): a consumer that keeps
 * membership writes removals from it without reading its own state, and falls back to its
 * own state for messages that lack it.
 */
const removedDsContactIds = z.array(id).optional();

export const audienceSnapshot = z.object({
  ...base,
  kind: z.literal('snapshot'),
  attributes: z.record(z.string(), attributeValue),
  dataSources: z.array(id),
  dsContactIds: z.array(id),
  removedDsContactIds,
  /**
   * When the audience contact was first written (its `_created_at`; its `_updated_at` is `at`).
   * Optional (added later, schema version unchanged): a consumer writes no `_created_at` for a
   * message that lacks it.
   */
  createdAt: isoTimestamp.optional(),
});
export const audienceMerge = z.object({ ...base, kind: z.literal('merge'), absorbedIds: z.array(id).min(1) });
export const audienceTombstone = z.object({ ...base, kind: z.literal('tombstone'), removedDsContactIds });
export const audienceChange = z.discriminatedUnion('kind', [audienceSnapshot, audienceMerge, audienceTombstone]);
export type AudienceChange = z.infer<typeof audienceChange>;

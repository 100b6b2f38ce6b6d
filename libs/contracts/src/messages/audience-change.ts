import { z } from 'zod';
import { attributeValue, id, isoTimestamp } from './common';

/**
 * `meld.audience.v1`, published by identity-merge after each committed merge step.
 * `snapshot` is the full audience contact (consumers upsert by version); `merge` says
 * which audience ids were absorbed into the survivor; `tombstone` removes one.
 */
const base = { schemaVersion: z.literal(1), projectId: id, audienceId: id, version: z.number().int().nonnegative(), at: isoTimestamp };

export const audienceSnapshot = z.object({
  ...base,
  kind: z.literal('snapshot'),
  attributes: z.record(z.string(), attributeValue),
  dataSources: z.array(id),
  dsContactIds: z.array(id),
});
export const audienceMerge = z.object({ ...base, kind: z.literal('merge'), absorbedIds: z.array(id).min(1) });
export const audienceTombstone = z.object({ ...base, kind: z.literal('tombstone') });
export const audienceChange = z.discriminatedUnion('kind', [audienceSnapshot, audienceMerge, audienceTombstone]);
export type AudienceChange = z.infer<typeof audienceChange>;

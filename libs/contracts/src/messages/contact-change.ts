import { z } from 'zod';
import { attributePatch, id, isoTimestamp } from './common';

/**
 * `meld.contacts.v1`: a data-source contact changed. `version` grows with every write
 * of that contact (from its Postgres row), so a consumer drops anything older than
 * what it has applied: redelivery and reordering across retries are harmless.
 */
const base = {
  schemaVersion: z.literal(1),
  projectId: id,
  dataSourceId: id,
  userId: id,
  version: z.number().int().nonnegative(),
  at: isoTimestamp,
};

export const contactUpsert = z.object({ ...base, kind: z.literal('upsert'), patch: attributePatch });
export const contactDelete = z.object({ ...base, kind: z.literal('delete') });
export const contactChange = z.discriminatedUnion('kind', [contactUpsert, contactDelete]);
export type ContactChange = z.infer<typeof contactChange>;

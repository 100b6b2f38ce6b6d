import { envelope } from '@meld/api';
import { z } from 'zod';

/**
 * The three contact reads: `entity` is the audience contact as the caller may see it (data
 * level and data mode, `serializeContact`): always `id`, then whatever the level allows of
 * `_user_id`, the attributes, `_created_at` and `_updated_at` (ISO 8601 UTC, kept by Meld, ADR 0353),
 * `_datasources` and `_ds_contact_ids`.
 */
export const AudienceContactSchema = z
  .object({ id: z.string().describe('audience contact id, used in later calls') })
  .catchall(z.unknown())
  .meta({ id: 'AudienceContact' });

export const ContactReadSchema = envelope(
  AudienceContactSchema,
  z.object({
    matches: z.int().min(1).describe('audience contacts that matched; when more than one, `entity` is the most recently updated'),
  }),
).meta({ id: 'AudienceContactRead' });
export type ContactRead = z.infer<typeof ContactReadSchema>;

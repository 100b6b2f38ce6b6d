import { ATTRIBUTE_TYPES, CUSTOM_ATTRIBUTE_UID, CUSTOM_ATTRIBUTE_UID_RULE } from '@meld/contracts';
import { z } from 'zod';

export const CreateAttributeBody = z
  .strictObject({
    // The names ingest creates are the names the catalogue declares (ADR 0035).
    uid: z.string().regex(CUSTOM_ATTRIBUTE_UID, CUSTOM_ATTRIBUTE_UID_RULE),
    label: z.string().trim().min(1).max(200),
    type: z.enum(ATTRIBUTE_TYPES),
    multivalue: z.boolean().default(false),
    enabled: z.boolean().default(true),
    visible: z.boolean().default(true),
    internal: z.boolean().default(false),
    unique: z.boolean().default(false).describe('can identify a contact, so it may become a merging attribute'),
  })
  .refine((a) => !(a.unique && a.multivalue), { message: 'a unique attribute cannot be multivalue', path: ['unique'] })
  .meta({ id: 'CreateAttributeBody' });

export type CreateAttributeCommand = z.infer<typeof CreateAttributeBody> & { projectUid: string };

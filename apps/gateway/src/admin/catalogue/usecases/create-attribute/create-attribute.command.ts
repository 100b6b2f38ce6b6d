import { ATTRIBUTE_TYPES } from '@meld/contracts';
import { z } from 'zod';

export const CreateAttributeBody = z
  .strictObject({
    uid: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,63}$/, 'must start with a lowercase letter; lowercase letters, digits or _ (names starting with _ are reserved)'),
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

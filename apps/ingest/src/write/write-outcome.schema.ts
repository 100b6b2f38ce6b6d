import { entityOnly } from '@meld/api';
import { z } from 'zod';

const ItemOutcomeSchema = z.object({
  status: z.enum(['success', 'error']),
  _user_id: z.string().nullable(),
  errors: z.record(z.string(), z.array(z.string())).optional().describe('attribute or field name → messages (errors only)'),
});

/** The outcome of a contact or event write (202 partial or complete, 422 when every item failed). */
export const WriteOutcomeSchema = entityOnly(
  z.object({ successful: z.int(), failed: z.int(), items: z.array(ItemOutcomeSchema).describe('one per item, in request order') }),
).meta({ id: 'WriteOutcome' });

export const DeletedContactSchema = entityOnly(z.object({ _user_id: z.string(), deleted: z.literal(true) })).meta({ id: 'DeletedContact' });

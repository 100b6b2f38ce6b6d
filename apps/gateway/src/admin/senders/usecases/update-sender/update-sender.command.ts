import { z } from 'zod';
import { SENDER_STATUSES } from '@meld/api';
import { SenderCountriesInput } from '../create-sender/create-sender.command';

/** Any of the sender's writable fields; `countries`, when given, replaces the whole list. */
export const UpdateSenderBody = z
  .strictObject({
    alias: z.string().trim().min(1).max(100).optional(),
    name: z.string().trim().min(1).max(200).optional(),
    status: z.enum(SENDER_STATUSES).optional().describe('e.g. `inactive` pauses the sender'),
    countries: SenderCountriesInput.optional().describe('the complete new list of countries'),
  })
  .meta({ id: 'UpdateSenderBody' });

export type UpdateSenderCommand = z.infer<typeof UpdateSenderBody> & { projectUid: string; senderId: string };

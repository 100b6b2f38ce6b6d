import { z } from 'zod';
import { id, isoTimestamp } from './common';

export const smsStatuses = ['enqueued', 'sent', 'delivered', 'undelivered', 'expired', 'failed', 'rejected'] as const;

/** `meld.sms-status.v1`: one status change of a direct SMS, ordered per message by its key. */
export const smsStatusChange = z.object({
  schemaVersion: z.literal(1),
  projectId: id,
  smsId: id,
  audienceId: id.nullable(),
  status: z.enum(smsStatuses),
  messagesCount: z.number().int().positive(),
  at: isoTimestamp,
  error: z.string().optional(),
});
export type SmsStatusChange = z.infer<typeof smsStatusChange>;

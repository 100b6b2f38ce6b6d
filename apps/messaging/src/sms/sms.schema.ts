import { entityOnly, envelope, timestamp, unstorableText } from '@meld/api';
import { smsStatuses } from '@meld/contracts';
import { z } from 'zod';

/** The longest text accepted: ten concatenated GSM-7 parts' worth; longer is not a triggered SMS. */
export const MAX_TEXT_LENGTH = 1530;

export const DirectSmsBody = z
  .strictObject({
    text: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(MAX_TEXT_LENGTH, `must be at most ${MAX_TEXT_LENGTH} characters`)
      // Checked here, not left to Postgres: sends share a transaction (ADR 0202), and one text it cannot store would fail them all.
      .superRefine((text, ctx) => {
        const bad = unstorableText(text);
        if (bad) ctx.addIssue({ code: 'custom', message: bad });
      }),
  })
  .meta({ id: 'DirectSmsBody' });

export const DirectSmsEntity = z
  .object({
    id: z.string(),
    status: z.enum(smsStatuses),
    encoding: z.enum(['GSM-7', 'UCS-2']),
    messagesCount: z.number().int().describe('parts billed'),
    pricePerSms: z.number().describe("the sender's price per part for the destination country"),
    audienceId: z.string().nullable(),
  })
  .meta({ id: 'DirectSms' });
export type DirectSms = z.infer<typeof DirectSmsEntity>;

export const DirectSmsCreated = envelope(DirectSmsEntity, z.object({ autoCreated: z.boolean() })).meta({ id: 'DirectSmsCreated' });
export type DirectSmsResponse = z.infer<typeof DirectSmsCreated>;

export const SmsHistoryEntry = z.object({ status: z.enum(smsStatuses), at: timestamp(), error: z.string().nullable() });

/** A message as read back: the send entity, what it was sent from and to, and its history. */
export const SmsReadEntity = DirectSmsEntity.extend({
  senderId: z.string(),
  destination: z.string().describe('E.164; masked unless the token may read PII, and for every token once its contact was deleted'),
  text: z.string().nullable().describe('null unless the token may read PII, and for every token once its contact was deleted'),
  error: z.string().nullable(),
  createdAt: timestamp(),
  updatedAt: timestamp(),
}).meta({ id: 'SmsMessage' });

export const SmsReadResponse = entityOnly(SmsReadEntity.extend({ history: z.array(SmsHistoryEntry).describe('every status change, oldest first') })).meta({ id: 'SmsMessageRead' });

export const DirectSmsHeaders = z.object({ 'Idempotency-Key': z.string().min(1).max(255).optional() });

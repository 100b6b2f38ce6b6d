import { isoWithOffset } from '@meld/api';
import { maskPhone } from '@meld/auth';
import type { z } from 'zod';
import type { SmsReadEntity } from '../sms.schema';
import { CURRENT_AUDIENCE_ID } from '../current-audience-id';

/** The columns of a message as read (alias `m` = sms_messages); its contact as it is now. */
export const SMS_COLUMNS = `m.id, m.status, m.encoding, m.messages_count AS "messagesCount", m.price_per_sms::float8 AS "pricePerSms", ${CURRENT_AUDIENCE_ID} AS "audienceId",
  m.sender_id AS "senderId", m.destination, m.text, m.error, m.created_at AS "createdAt", m.updated_at AS "updatedAt"`;

export type SmsRow = Omit<z.infer<typeof SmsReadEntity>, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };

/** A message as a caller sees it: the text and the number in clear only when it may read PII (a redacted message has neither, ADR 0358). */
export function toSmsView(row: SmsRow, mayReadPii: boolean): z.infer<typeof SmsReadEntity> {
  return {
    ...row,
    destination: mayReadPii ? row.destination : maskPhone(row.destination),
    text: mayReadPii ? row.text : null,
    createdAt: isoWithOffset(row.createdAt),
    updatedAt: isoWithOffset(row.updatedAt),
  };
}

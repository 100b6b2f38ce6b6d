import { createHash } from 'node:crypto';
import type { SmsStatusChange } from '@meld/contracts';

/** One delivery report of a status change: its event id and the exact JSON that is signed and sent. */
export interface WebhookReport {
  eventId: string;
  body: string;
}

/**
 * The report of a `meld.sms-status.v1` change (ADR 0323). The body is the payload of system
 * design §4 in its field order. The event id (`webhook-id`) is a name-based uuid of the message
 * and the status: a message takes each status at most once, so every redelivery of the change
 * (an outbox pass that rolled back and ran again, a spilled attempt retried) sends
 * the same id and receivers de-duplicate on it.
 */
export function webhookReport(change: SmsStatusChange): WebhookReport {
  const { smsId, status, audienceId, messagesCount, at, error } = change;
  const body = JSON.stringify({ id: smsId, status, audienceId, messagesCount, at, ...(error ? { error } : {}) });
  return { eventId: nameUuid(`${smsId}:${status}`), body };
}

/** An RFC 9562 version 5 layout over SHA-1 of the name (no namespace: the names are Meld's own). */
function nameUuid(name: string): string {
  const h = createHash('sha1').update(name).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

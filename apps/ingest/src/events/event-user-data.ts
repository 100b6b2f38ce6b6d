import { CONTACT_STATE_MAX_BYTES } from '@meld/db';

/**
 * The most an event's `_user_data` may take, as the UTF-8 bytes of its JSON: 256 KiB, what one
 * contact may hold (ADR 0346). The event's `meld.events.v1` message carries `_user_data` as sent,
 * names cleared with null included (they cost the contact nothing, so the contact cap does not
 * bound them), and Kafka refuses a record batch above ~1 MiB: with `_event_parameters` at most
 * 16 KiB (ADR 0113) and ids of at most 256 characters, every accepted event's record (key, value,
 * headers) stays under 280 KiB, a third of a produce request (libs/kafka DEFAULT_MAX_BATCH_BYTES).
 */
export const EVENT_USER_DATA_MAX_BYTES = CONTACT_STATE_MAX_BYTES;

/** Why a `_user_data` object is too large for the event's message, or null. */
export function userDataSizeError(userData: Record<string, unknown>): string | null {
  const bytes = Buffer.byteLength(JSON.stringify(userData));
  if (bytes <= EVENT_USER_DATA_MAX_BYTES) return null;
  return `must be at most ${EVENT_USER_DATA_MAX_BYTES} bytes (256 KiB) as JSON (is ${bytes}): the event's message carries it whole; nothing of this item was applied: send fewer attributes, or clear them with a contact write`;
}

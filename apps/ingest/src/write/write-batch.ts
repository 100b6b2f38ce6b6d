import { BadRequestException } from '@nestjs/common';
import { isPlainObject, type ItemErrors } from '../contacts/contact-item';

/** Items per call, contacts and events (ingest spec, Limits). */
export const MAX_BATCH_ITEMS = 100;

/**
 * The body of a write: a JSON array of objects, even for one record: 1 to 100 contacts, up to
 * 100 events (the ingest spec's wording; an empty event batch is accepted with nothing in it,
 * ADR 0334). Anything else is the whole request's fault (400 with a `message`), not an item's.
 */
export function parseBatch(body: unknown, what: 'contacts' | 'events'): Record<string, unknown>[] {
  const least = what === 'contacts' ? 1 : 0;
  if (!Array.isArray(body)) throw new BadRequestException(`body must be a JSON array of ${what} (${least} to ${MAX_BATCH_ITEMS} items, even for one record)`);
  if (body.length < least) throw new BadRequestException(`body must hold at least one item`);
  if (body.length > MAX_BATCH_ITEMS) throw new BadRequestException(`body holds ${body.length} items; at most ${MAX_BATCH_ITEMS} per call`);
  const bad = body.findIndex((item) => !isPlainObject(item));
  if (bad >= 0) throw new BadRequestException(`item [${bad}] must be a JSON object`);
  return body as Record<string, unknown>[];
}

export type ItemOutcome = { status: 'success'; _user_id: string | null } | { status: 'error'; _user_id: string | null; errors: ItemErrors };

export interface WriteOutcome {
  entity: { successful: number; failed: number; items: ItemOutcome[] };
}

/** 202 when anything was accepted (inspect items) or nothing was sent, 422 when every item failed. */
export function writeOutcome(items: ItemOutcome[]): { status: 202 | 422; body: WriteOutcome } {
  const failed = items.filter((i) => i.status === 'error').length;
  const successful = items.length - failed;
  return { status: failed > 0 && successful === 0 ? 422 : 202, body: { entity: { successful, failed, items } } };
}

/** The `_user_id` echoed in an item outcome: the sent one when it is a string. */
export function echoUserId(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

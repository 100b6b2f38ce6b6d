import { UnprocessableEntityException } from '@nestjs/common';

/** Why a direct SMS is refused at request time (system design §4), in `details.reason`. */
export type RefusalReason =
  | 'opted_out'
  | 'suppressed'
  | 'no_phone'
  | 'sender_inactive'
  | 'country_not_accepted'
  | 'insufficient_funds'
  | 'idempotency_key_reused';

/** A 422 that sends nothing, with the reason a client can branch on. */
export function refuse(reason: RefusalReason, message: string, details: Record<string, unknown> = {}): UnprocessableEntityException {
  return new UnprocessableEntityException({ message, details: { reason, ...details } });
}

/** Whether an error is the 422 of this refusal reason. */
export function isRefusal(error: unknown, reason: RefusalReason): boolean {
  if (!(error instanceof UnprocessableEntityException)) return false;
  const body = error.getResponse();
  return typeof body === 'object' && body !== null && (body as { details?: { reason?: unknown } }).details?.reason === reason;
}

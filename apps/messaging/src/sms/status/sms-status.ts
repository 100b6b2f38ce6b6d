import type { SmsStatusChange } from '@meld/contracts';

export type SmsStatus = SmsStatusChange['status'];

/**
 * The statuses a message may move to from each status (system design §4). Receipts only
 * follow `sent`; `failed` and `rejected` end a message before it reached the SMSC.
 */
export const NEXT_STATUSES: Readonly<Record<SmsStatus, readonly SmsStatus[]>> = {
  enqueued: ['sent', 'failed', 'rejected'],
  sent: ['delivered', 'undelivered', 'expired'],
  delivered: [],
  undelivered: [],
  expired: [],
  failed: [],
  rejected: [],
};

/**
 * Whether a status is reported to the organization's delivery-report webhook (ADR 0351): every
 * change, not the initial `enqueued`, which the send's 201 already answers (product API, States:
 * "status changes are reported"; Twilio sends no status callback for a message's initial status).
 */
export const reportedByWebhook = (status: SmsStatus): boolean => status !== 'enqueued';

/** Statuses that give a prepaid organization its reserved funds back (nothing was sent). */
export const REFUNDED_STATUSES: ReadonlySet<SmsStatus> = new Set(['failed', 'rejected']);

/** Receipt `stat:` values (SMPP 3.4 appendix B) → status; anything unknown waits for a final one. */
const RECEIPT_STATUSES = new Map<string, SmsStatus>([
  ['DELIVRD', 'delivered'],
  ['UNDELIV', 'undelivered'],
  ['EXPIRED', 'expired'],
  ['REJECTD', 'undelivered'],
  ['DELETED', 'undelivered'],
  ['UNKNOWN', 'undelivered'],
]);

export function receiptStatus(stat: string): SmsStatus | null {
  return RECEIPT_STATUSES.get(stat) ?? null;
}

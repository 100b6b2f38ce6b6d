/**
 * Why a message can never be published as it is (ADR 0346), as a metric label: sending it again
 * fails again, whatever the broker's health. An outbox relay sets such a row aside instead of
 * retrying its pass forever.
 */
export type UnpublishableReason = 'message_too_large' | 'record_list_too_large' | 'invalid_record' | 'schema' | 'not_json';

/** Thrown by the producer before sending, for a message it refuses itself (its schema, its JSON). */
export class UnpublishableMessageError extends Error {
  override readonly name = 'UnpublishableMessageError';
  constructor(
    readonly reason: UnpublishableReason,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The broker's refusals that are about the records sent, not about the broker, the topic or the
 * client: kafkajs marks them not retriable. Other non-retriable errors (authorization, an
 * unsupported version, a topic's configuration) would refuse every row alike: setting rows aside
 * for them would empty the outbox into the dead letters, so a relay keeps retrying those.
 */
const BROKER_REFUSALS: Readonly<Record<string, UnpublishableReason>> = {
  MESSAGE_TOO_LARGE: 'message_too_large',
  RECORD_LIST_TOO_LARGE: 'record_list_too_large',
  INVALID_RECORD: 'invalid_record',
};

/**
 * The reason `err` (a failed send) can never succeed for the messages it was about, or null when
 * it may (a broker down, a leader moving, a timeout, anything unknown). Follows `cause` (kafkajs
 * wraps what its retrier gave up on) a few levels down.
 */
export function unpublishableReason(err: unknown): UnpublishableReason | null {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++) {
    if (e instanceof UnpublishableMessageError) return e.reason;
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && Object.hasOwn(BROKER_REFUSALS, type)) return BROKER_REFUSALS[type];
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

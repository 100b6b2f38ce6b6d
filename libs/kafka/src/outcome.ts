/**
 * What a handler tells the runner. Returning nothing (or `ok`) means done; throwing is the
 * usual way to fail:
 * - `RetriableError` or any other error: retried with backoff, then dead-lettered once the
 *   attempts run out. Unknown errors count as retriable because most of them are a store
 *   blip; a handler that knows a message can never succeed says so with `DeadLetterError`.
 * - `DeadLetterError`: straight to the dead-letter topic, no retry.
 * Handlers that prefer values over exceptions return `Outcome.retry(...)` /
 * `Outcome.deadLetter(...)` instead.
 */
export class RetriableError extends Error {
  override readonly name = 'RetriableError';
}

export class DeadLetterError extends Error {
  override readonly name = 'DeadLetterError';
}

export type HandlerOutcome =
  | { readonly kind: 'ok' }
  | { readonly kind: 'retry'; readonly error: Error }
  | { readonly kind: 'dead-letter'; readonly error: Error };

const OK: HandlerOutcome = Object.freeze({ kind: 'ok' });

export const Outcome = {
  ok: (): HandlerOutcome => OK,
  retry: (reason: string | Error): HandlerOutcome => ({ kind: 'retry', error: toError(reason) }),
  deadLetter: (reason: string | Error): HandlerOutcome => ({ kind: 'dead-letter', error: toError(reason) }),
};

function toError(reason: string | Error): Error {
  return typeof reason === 'string' ? new Error(reason) : reason;
}

/** Normalises what a handler returned or threw into an outcome. */
export function outcomeOf(result: HandlerOutcome | void | undefined): HandlerOutcome {
  return result ?? OK;
}

/**
 * What was thrown, as an Error. An error of another realm (Node core's errors inside Jest's VM
 * context) is not `instanceof Error`: it is kept as the cause, so its `code` still classifies it.
 */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err), { cause: err });
}

export function outcomeOfError(err: unknown): HandlerOutcome {
  const error = asError(err);
  return error instanceof DeadLetterError ? { kind: 'dead-letter', error } : { kind: 'retry', error };
}

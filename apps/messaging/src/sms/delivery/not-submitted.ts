import { errorSummary, LoggableError } from '@meld/contracts';

/**
 * The `error` stored on a message whose send job gave up: it reaches the message's reads and its
 * webhook reports, so it says what of ours went wrong (an SMSC error built from constants) and
 * otherwise only the error's class and code: a store's or a driver's text can quote a phone or
 * name an internal host (ADR 0338).
 */
export function notSubmittedError(err: unknown): string {
  return `not submitted: ${err instanceof LoggableError ? err.message : errorSummary(err)}`;
}

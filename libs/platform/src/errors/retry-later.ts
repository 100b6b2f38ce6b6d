import { ServiceUnavailableException } from '@nestjs/common';

/**
 * A 503 the client should retry after `retryAfterSeconds` (sent as `Retry-After` by the
 * HttpErrorFilter): a store the request needs did not answer in time, and nothing was done.
 */
export class RetryLaterException extends ServiceUnavailableException {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { exceededLimit, type QueryLimit } from '@meld/clickhouse';
import { errorSummary } from '@meld/contracts';
import { isPostgresUnavailable } from '@meld/db';
import { BadJsonBody, BodyEncodingRefused } from '../bootstrap/json-body';
import { errorBody } from './error-body';
import { RetryLaterException } from './retry-later';

/**
 * Every error leaves in the `{statusCode, error, message, details?}` shape. Fastify's own
 * errors (body not JSON, body too large) keep their 4xx status; anything unexpected is a
 * logged 500 that reveals nothing internal.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly log = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost) {
    if (host.getType() !== 'http') throw exception;
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const res = exception.getResponse();
      if (status === 429 && res === '') return reply.code(429).send('');
      // Health reports (terminus) are their own documented shape: pass them through.
      if (typeof res === 'object' && res !== null && !('message' in res) && 'status' in res) return reply.code(status).send(res);
      const body = typeof res === 'string' ? { message: res } : (res as { message?: unknown; details?: unknown });
      const message = Array.isArray(body.message) ? body.message.join('; ') : String(body.message ?? exception.message);
      if (exception instanceof RetryLaterException) reply.header('retry-after', String(exception.retryAfterSeconds));
      return reply.code(status).send(errorBody(status, message, body.details));
    }
    const limit = exceededLimit(exception);
    if (limit) {
      this.log.warn({ limit }, 'a ClickHouse read ran into its limit');
      return limitReply(reply, limit);
    }
    if (isPostgresUnavailable(exception)) {
      // The summary only: a QueryFailedError carries the statement's parameters (ADR 0338).
      this.log.warn(`request not served, postgres unavailable: ${errorSummary(exception)}`);
      return reply.code(503).header('retry-after', String(POSTGRES_RETRY_AFTER_SECONDS)).send(errorBody(503, POSTGRES_UNAVAILABLE));
    }
    if (isUnstorableText(exception)) {
      this.log.warn({ err: exception }, 'a value Postgres cannot store reached a query');
      return reply.code(400).send(errorBody(400, 'a value contains the NUL character (U+0000) or an invalid byte sequence, which cannot be stored'));
    }
    const fastifyStatus = (exception as { statusCode?: number }).statusCode;
    if (typeof fastifyStatus === 'number' && fastifyStatus >= 400 && fastifyStatus < 500) {
      // A 415 names the content codings taken (RFC 9110 §15.5.16, ADR 0012).
      if (exception instanceof BodyEncodingRefused && exception.headers) reply.headers(exception.headers);
      return reply.code(fastifyStatus).send(errorBody(fastifyStatus, (exception as Error).message, exception instanceof BadJsonBody ? exception.details : undefined));
    }
    this.log.error({ err: exception }, 'unhandled error');
    return reply.code(500).send(errorBody(500, 'internal error'));
  }
}

/**
 * Postgres refuses U+0000 in text and jsonb (SQLSTATE 22021, 22P05). The write paths check
 * for it per item; this is the net for a value that reaches a query another way: the
 * caller's input, so a 400, not a 500. TypeORM wraps the driver's error as `driverError`.
 */
const UNSTORABLE_TEXT = new Set(['22021', '22P05']);

export function isUnstorableText(exception: unknown): boolean {
  const err = exception as { code?: unknown; driverError?: { code?: unknown } } | null;
  return typeof err === 'object' && err !== null && (UNSTORABLE_TEXT.has(String(err.code)) || UNSTORABLE_TEXT.has(String(err.driverError?.code)));
}

/** ADR 0360: Postgres down, stalled, out of connections or not yet connected; nothing was done. */
export const POSTGRES_UNAVAILABLE = 'Postgres did not answer: retry later';
const POSTGRES_RETRY_AFTER_SECONDS = 5;

/** Seconds a client should wait before retrying a read that timed out. */
const TIMEOUT_RETRY_AFTER_SECONDS = 10;

/**
 * ADR 0114: a read that took too long may succeed on a quieter store, so 503 with Retry-After;
 * one that needed too much memory will need it again, so 422: the filter is too expensive.
 */
function limitReply(reply: FastifyReply, limit: QueryLimit) {
  if (limit === 'max_execution_time') {
    return reply
      .code(503)
      .header('retry-after', String(TIMEOUT_RETRY_AFTER_SECONDS))
      .send(errorBody(503, 'the store timed out: the query ran longer than max_execution_time (MELD_CLICKHOUSE_MAX_EXECUTION_TIME); retry later, or narrow the filter or period', { limit }));
  }
  return reply
    .code(422)
    .send(errorBody(422, 'the filter is too expensive: the query needs more memory than max_memory_usage (MELD_CLICKHOUSE_MAX_MEMORY_USAGE) allows; narrow the filter or period', { limit }));
}

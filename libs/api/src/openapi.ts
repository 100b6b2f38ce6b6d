import { applyDecorators } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants';
import { ApiHeader, ApiResponse, documentedResponses } from './openapi-decorators';
import type { z } from 'zod';
import { ErrorSchema } from './error.resource';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid request; `details.fields` lists each bad field as {path, message}',
  401: 'missing, malformed, unknown or revoked token',
  403: 'the token lacks a scope this route needs',
  404: 'not found, or not visible to this token',
  409: 'already exists',
  413: 'request body too large',
  415: 'unsupported `Content-Encoding`; `Accept-Encoding` names those taken',
  503: 'a store Meld needs is unavailable; retry later',
};

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: 'requests allowed in the window', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'requests left in the window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) when the window resets', schema: { type: 'integer' } },
} as const;

/** Documents error responses in Meld's one error shape; 429 has an empty body (system design §4). */
export function ApiErrors(...statuses: number[]) {
  return applyDecorators(
    ...statuses.map((status) =>
      status === 429
        ? ApiResponse({ status, description: 'rate limit exceeded; empty body, retry after `X-RateLimit-Reset`', headers: RATE_LIMIT_HEADERS })
        : ApiError(status, ERROR_DESCRIPTIONS[status] ?? 'error'),
    ),
  );
}

/** A write whose JSON body may come compressed (ADR 0012): its `Content-Encoding`, and the 415 of any other coding. */
export function ApiCompressedBody() {
  return applyDecorators(
    ApiHeader({ name: 'Content-Encoding', required: false, enum: ['gzip', 'deflate', 'identity'], description: "the body's compression, in any case (`x-gzip` is gzip); the body limit holds for the compressed body and for the JSON it inflates to (413)" }),
    ApiErrors(415),
  );
}

const RETRY_AFTER_HEADER = { 'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer' } } };

/** A 503 the client is to retry after `Retry-After` seconds, in the error shape. */
export function ApiRetryLater(description: string) {
  return ApiResponse({ status: 503, description, standardSchema: ErrorSchema, headers: RETRY_AFTER_HEADER });
}

const postgresUnavailable = () =>
  ApiRetryLater('Postgres did not answer within `MELD_POSTGRES_REQUEST_TIMEOUT_MS` (down, stalled or starting): "Postgres did not answer: retry later"; retry after `Retry-After` seconds, a write included (ADR 0360)');

/**
 * On a controller whose routes read or write Postgres on their request path: each route's 503
 * with Retry-After of Postgres not answering (ADR 0360). A route whose 503 names Postgres already
 * (`ApiStoreReadLimits`, its own) keeps it; a 503 of another cause gets this one joined to it.
 */
export function ApiPostgresUnavailable(): ClassDecorator {
  return (target) => {
    const proto = target.prototype as object;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const method = name === 'constructor' ? undefined : Object.getOwnPropertyDescriptor(proto, name);
      if (!method || typeof method.value !== 'function' || !Reflect.hasMetadata(METHOD_METADATA, method.value)) continue;
      if (!documentedResponses(method.value)?.['503']?.description?.includes('Postgres')) postgresUnavailable()(proto, name, method);
    }
  };
}

/**
 * The answers of a route whose ClickHouse read passes its limits (ADR 0114), given by the shared
 * error filter with `details.limit`: 422 for memory (narrow the filter), 503 with Retry-After for time;
 * the 503 is also Postgres not answering (ADR 0360).
 */
export function ApiStoreReadLimits() {
  return applyDecorators(
    ApiError(422, 'the filter is too expensive: the read needs more memory than `max_memory_usage` allows (`details.limit`); narrow the filter or period'),
    ApiRetryLater(
      'the store timed out: the read ran longer than `max_execution_time` (`details.limit`), or Postgres did not answer within `MELD_POSTGRES_REQUEST_TIMEOUT_MS` (no `details.limit`, ADR 0360); retry after `Retry-After` seconds, or narrow the filter or period',
    ),
  );
}

/** One error response with a description of this route's own reason. */
export function ApiError(status: number, description: string) {
  return ApiResponse({ status, description, standardSchema: ErrorSchema });
}

/**
 * A success response documented from the same zod schema the tests parse responses with.
 * Public routes carry the gateway's rate-limit headers; the admin API has none.
 */
export function ApiSuccess(status: number, schema: z.ZodType | null, description: string, { rateLimited = true } = {}) {
  return ApiResponse({ status, description, ...(schema ? { standardSchema: schema } : {}), ...(rateLimited ? { headers: RATE_LIMIT_HEADERS } : {}) });
}

/** The errors every public route can answer, whatever it does: the gateway's token, scope and rate-limit checks. */
export const PUBLIC_ROUTE_ERRORS = [401, 403, 404, 429] as const;

/** The same for the ingest API (a data source's stream routes): its error table has no 403, a refused token is a 404 (ADR 0009). */
export const INGEST_ROUTE_ERRORS = [401, 404, 429] as const;

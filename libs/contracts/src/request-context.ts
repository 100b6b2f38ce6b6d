import { context, createContextKey, type Context } from '@opentelemetry/api';

/** The header that carries a request id: HTTP between the apps and Kafka messages alike (ADR 0187). */
export const REQUEST_ID_HEADER = 'x-request-id';

const REQUEST_ID = createContextKey('meld.request-id');

/** `ctx` with the request id it was caused by; apps run each request and message under one. */
export function withRequestId(ctx: Context, requestId: string): Context {
  return ctx.setValue(REQUEST_ID, requestId);
}

/** The request id behind the work in progress (the active context by default), if any. */
export function activeRequestId(ctx: Context = context.active()): string | undefined {
  return ctx.getValue(REQUEST_ID) as string | undefined;
}

import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { withRequestId } from '@meld/contracts';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { requestIdOf } from '../logging/logger.module';

const tracer = trace.getTracer('meld-http');

/**
 * Fastify's `serverFactory`: every request runs under a context holding its request id and a
 * server span, a child of the caller's `traceparent` (ADR 0187). Here rather than in a Fastify
 * hook because the request stream is bound too: the body arrives in the socket's async context,
 * and the handler that runs after it must still see the request's. With tracing off the span is
 * the API's non-recording one. Fastify takes the same request id (`genReqId` reads `req.id`).
 * A request target in absolute-form is read as its origin-form first (`originForm`).
 */
export function tracedServerFactory(handler: RequestListener, options: { maxHeaderSize?: number; keepAliveTimeout?: number } = {}): Server {
  const server = createServer({ maxHeaderSize: options.maxHeaderSize }, (req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== undefined && !req.url.startsWith('/')) req.url = originForm(req.url);
    const requestId = requestIdOf(req);
    (req as { id?: unknown }).id = requestId;
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(`HTTP ${req.method}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method ?? '', 'meld.request_id': requestId } }, parent);
    const ctx = withRequestId(trace.setSpan(parent, span), requestId);
    if (span.isRecording()) {
      res.once('close', () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
    }
    context.bind(ctx, req);
    context.with(ctx, () => handler(req, res));
  });
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  return server;
}

/**
 * RFC 9112 §3.2.2: a server takes `GET http://host/path?q` (absolute-form) and must read it as
 * `/path?q`. Fastify's router did, but everything else read the URL as sent: the gateway forwarded
 * it so (the client's host in the app's request line), the access log's redaction knew none of its
 * paths (an SMS link code or a user id logged in clear; ADR 0104) and the JSON-only rule of `/v1`
 * did not see `/v1` (a form body was read on a JSON route). Anything else (`*`) is left to the router.
 */
export function originForm(url: string): string {
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(url);
  if (!authority) return url;
  const rest = url.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** Names the request's span after its route pattern once Fastify knows it (paths hold customers' data). */
export function nameSpanAfterRoute(method: string, route: string | undefined): void {
  const span = trace.getActiveSpan();
  if (span?.isRecording()) span.updateName(`${method} ${route ?? 'unmatched'}`);
}

/** Fastify's `genReqId`: the id the traced server took (the same rule), so logs and spans agree. */
export function tracedRequestId(req: IncomingMessage): string {
  const taken = (req as { id?: unknown }).id;
  return typeof taken === 'string' ? taken : requestIdOf(req);
}

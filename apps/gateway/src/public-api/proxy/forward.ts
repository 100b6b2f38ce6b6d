import type { IncomingHttpHeaders } from 'node:http';
import { Transform, pipeline, type Readable } from 'node:stream';
import { dict } from '@meld/contracts';
import { context, propagation } from '@opentelemetry/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';

/** Connection-level headers (RFC 9110 §7.6.1) never cross a proxy; undici refuses some of them anyway. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect'];
/**
 * Request headers the gateway owns: the bearer stays at the door (apps trust only the signed
 * principal), anything a client sends under our internal names is replaced.
 */
const DROP_REQUEST = new Set([...HOP_BY_HOP, 'host', 'authorization', 'content-length', 'x-meld-principal', 'x-request-id', 'x-forwarded-for', 'x-meld-ratelimit-limit', 'x-meld-ratelimit-remaining', 'x-meld-ratelimit-reset', 'x-meld-ratelimit-window']);
/** The gateway already set these on the reply (request id, rate-limit state). */
const DROP_RESPONSE = new Set([...HOP_BY_HOP, 'x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']);

export class BodyTooLarge extends Error {}

/**
 * Sends the request to the owning app at the same path and streams the answer back. The
 * body is piped through untouched (never parsed here); a chunked body is cut off at the
 * route's limit.
 */
export async function forward(
  pool: Dispatcher,
  request: FastifyRequest,
  reply: FastifyReply,
  extraHeaders: Record<string, string>,
  bodyLimit: number,
): Promise<void> {
  // Header names are the client's: a null-prototype object (ADR 0124).
  const headers: Record<string, string | string[]> = dict();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined && !DROP_REQUEST.has(name)) headers[name] = value;
  }
  const stream = request.body as Readable | undefined;
  const hasBody = stream !== undefined && typeof (stream as Readable).pipe === 'function';
  const bodyLength = request.headers['content-length'];
  if (hasBody && bodyLength !== undefined) headers['content-length'] = bodyLength;
  const forwardedFor = request.headers['x-forwarded-for'];
  headers['x-forwarded-for'] = forwardedFor ? `${String(forwardedFor)}, ${request.socket.remoteAddress ?? ''}` : (request.socket.remoteAddress ?? '');
  Object.assign(headers, extraHeaders);
  // With tracing on, the app's span is a child of the gateway's, not of the client's (ADR 0187).
  propagation.inject(context.active(), headers);

  const res = await pool.request({
    method: request.method as Dispatcher.HttpMethod,
    path: request.url,
    headers,
    body: hasBody ? (bodyLength !== undefined ? stream : pipeline(stream, limitBytes(bodyLimit), () => undefined)) : null,
  });
  reply.code(res.statusCode);
  reply.headers(responseHeaders(res.headers));
  // Small answers (nearly all: JSON entities) are collected and sent in one write with the
  // headers; piping them costs a socket write per chunk plus chunked framing. Still not parsed.
  const length = Number(res.headers['content-length']);
  if (request.method !== 'HEAD' && length <= BUFFER_LIMIT) return reply.send(Buffer.from(await res.body.arrayBuffer()));
  return reply.send(res.body);
}

const BUFFER_LIMIT = 64 * 1024;

function responseHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = dict();
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !DROP_RESPONSE.has(name)) out[name] = value;
  }
  return out;
}

function limitBytes(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > limit) done(new BodyTooLarge(`request body larger than ${limit} bytes`));
      else done(null, chunk);
    },
  });
}

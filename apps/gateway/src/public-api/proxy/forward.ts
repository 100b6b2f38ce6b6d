import { Readable, Transform, pipeline } from 'node:stream';
import { PRINCIPAL_HEADER } from '@meld/auth';
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
 * Sends the request to the owning app at the same path and passes the answer back. The
 * body is passed on untouched (never parsed here): a small one with a length is collected
 * and sent with the request's headers (ADR 0290), a larger one is piped through as it
 * arrives, a chunked one is piped and cut off at the route's limit. Resolves with the reply
 * once it is sent (or, for a streamed answer, once its stream is handed to Fastify); rejects
 * when the client's body or the app fails before the answer is complete (the caller maps that
 * to 502/504 or 413). `principal` signs the request's principal when the request leaves for the
 * app, after a collected body has arrived: the app measures the principal's age from the
 * request's arrival, so a slow upload must not spend it (ADR 0102).
 */
export function forward(
  pool: Dispatcher,
  request: FastifyRequest,
  reply: FastifyReply,
  extraHeaders: Record<string, string>,
  bodyLimit: number,
  principal?: () => string,
): Promise<FastifyReply> {
  // Header names are the client's: a null-prototype object (ADR 0124).
  const headers: Record<string, string | string[]> = dict();
  const incoming = request.headers;
  const nominated = connectionOptions(incoming.connection);
  for (const name in incoming) {
    const value = incoming[name];
    if (value !== undefined && !DROP_REQUEST.has(name) && !nominated?.has(name)) headers[name] = value;
  }
  const stream = request.body as Readable | undefined;
  const hasBody = stream !== undefined && typeof (stream as Readable).pipe === 'function';
  const bodyLength = incoming['content-length'];
  if (hasBody && bodyLength !== undefined) headers['content-length'] = bodyLength;
  const forwardedFor = incoming['x-forwarded-for'];
  const peer = request.socket.remoteAddress ?? '';
  headers['x-forwarded-for'] = forwardedFor ? `${String(forwardedFor)}, ${peer}` : peer;
  for (const name in extraHeaders) headers[name] = extraHeaders[name]!;
  // With tracing on, the app's span is a child of the gateway's, not of the client's (ADR 0187).
  propagation.inject(context.active(), headers);

  return new Promise((resolve, reject) => {
    // A GET or HEAD whose connection the app closed before answering (a kept-alive one it closed
    // on stopping, ADR 0004) goes once more, on another connection (RFC 9110 §9.2.2).
    let again = !hasBody && (request.method === 'GET' || request.method === 'HEAD');
    const retry = (err: Error): boolean => {
      if (!again || !CONNECTION_LOST.has((err as { code?: string }).code ?? '')) return false;
      again = false;
      send(null);
      return true;
    };
    const send = (body: Buffer | Readable | null) => {
      if (principal) headers[PRINCIPAL_HEADER] = principal();
      return pool.dispatch({ method: request.method as Dispatcher.HttpMethod, path: request.url, headers, body }, new AnswerHandler(reply, request.method === 'HEAD', resolve, reject, retry));
    };
    if (!hasBody) send(null);
    else if (bodyLength === undefined) send(pipeline(stream, limitBytes(bodyLimit), () => undefined));
    else if (Number(bodyLength) <= COLLECT_LIMIT) collect(stream, send, reject);
    else send(stream);
  });
}

/**
 * Bodies up to this length (the caller has already refused any over the route's limit) are
 * collected and dispatched as one buffer (ADR 0290): undici then writes them with the
 * request's headers in one call and skips what a stream body costs per request (its flowing
 * setup, six listeners, a deferred dispatch, the destroy of the client's request stream).
 * Larger ones stream, so the gateway never holds a big body in memory.
 */
const COLLECT_LIMIT = 64 * 1024;

/** The client's whole body (its length is known and small), or the error that ended it first. */
function collect(stream: Readable, done: (body: Buffer) => void, fail: (err: Error) => void): void {
  const chunks: Buffer[] = [];
  const onData = (chunk: Buffer) => void chunks.push(chunk);
  const onEnd = () => {
    cleanup();
    done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
  };
  const onError = (err: Error) => {
    cleanup();
    fail(err);
  };
  // A client gone before its body was complete: Node emits 'error' then 'close'; 'close' alone covers a destroy without one.
  const onClose = () => onError(new Error('the client closed the request before its body was complete'));
  const cleanup = () => stream.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
  stream.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
}

const BUFFER_LIMIT = 64 * 1024;

/** undici's and the socket's codes of a connection closed or reset under a request. */
const CONNECTION_LOST = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/**
 * The app's answer, taken straight from undici's dispatcher (ADR 0270): no response stream,
 * promise or body mixin per request as `request()` makes. Small answers with a length (nearly
 * all: JSON entities) are collected and sent in one write with the headers (ADR 0257); piping
 * them would cost a socket write per chunk plus chunked framing. Larger or unsized answers are
 * streamed, with undici's socket paused while the client's side is full.
 */
class AnswerHandler implements Dispatcher.DispatchHandler {
  private status = 0;
  private headers: Record<string, string | string[]> | undefined;
  private chunks: Buffer[] | undefined;
  private body: Readable | undefined;

  constructor(
    private readonly reply: FastifyReply,
    private readonly head: boolean,
    private readonly resolve: (reply: FastifyReply) => void,
    private readonly reject: (err: Error) => void,
    /** Takes over an error that came before any answer, when it sends the request again. */
    private readonly retry?: (err: Error) => boolean,
  ) {}

  onConnect(): void {}

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    this.status = status;
    const headers = responseHeaders(rawHeaders);
    const length = Number(headers['content-length']);
    if (!this.head && length <= BUFFER_LIMIT) {
      this.headers = headers;
      this.chunks = [];
      return true;
    }
    this.body = new Readable({ read: resume });
    this.resolve(this.reply.code(status).headers(headers).send(this.body));
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.chunks) {
      this.chunks.push(chunk);
      return true;
    }
    return this.body!.push(chunk);
  }

  onComplete(): void {
    if (this.chunks) {
      const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
      this.resolve(this.reply.code(this.status).headers(this.headers!).send(body));
    } else {
      this.body?.push(null);
    }
  }

  onError(err: Error): void {
    if (this.body) this.body.destroy(err);
    else if (!(this.status === 0 && this.retry?.(err))) this.reject(err);
  }
}

/** The answer's headers (lower-cased names, repeated ones as lists) minus those the gateway owns and those its Connection names. */
function responseHeaders(raw: Buffer[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = dict();
  let connection: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1').toLowerCase();
    if (name === 'connection') connection = connection === undefined ? raw[i + 1]!.toString('latin1') : `${connection},${raw[i + 1]!.toString('latin1')}`;
    if (DROP_RESPONSE.has(name)) continue;
    const value = raw[i + 1]!.toString('latin1');
    const seen = out[name];
    if (seen === undefined) out[name] = value;
    else if (typeof seen === 'string') out[name] = [seen, value];
    else seen.push(value);
  }
  const nominated = connectionOptions(connection);
  if (nominated) for (const name of nominated) delete out[name];
  return out;
}

const PLAIN_CONNECTION = /^\s*(keep-alive|close)\s*$/i;

/**
 * The header names a Connection header lists (RFC 9110 §7.6.1: connection options): they belong
 * to the hop they came over, and a proxy removes them before it forwards the message. Undefined
 * when there is nothing to remove (the common `keep-alive` or `close`).
 */
function connectionOptions(value: string | undefined): Set<string> | undefined {
  if (value === undefined || PLAIN_CONNECTION.test(value)) return undefined;
  const names = value.split(',').map((option) => option.trim().toLowerCase()).filter((option) => option !== '' && option !== 'keep-alive' && option !== 'close');
  return names.length ? new Set(names) : undefined;
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

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { urlRedactor } from './redact-url';

/** Probes and scrapes would drown the log; they stay visible in metrics. */
const QUIET = /^\/(healthz|readyz|livez|metrics)(\?|$)/;

type Sink = {
  log(record: object, context: string): void;
  /** Whether an info line would be written now: when not, the line is not even built (ADR 0208). */
  enabled(): boolean;
};

/**
 * One line per answered request, from a Fastify hook: the gateway's public routes are plain
 * Fastify routes that Nest middleware never sees, so this is the one place every request
 * passes. The URL is redacted (ADR 0104): callers put phones and emails in paths and queries.
 * Returns the line's writer for the answers Fastify's router gives itself (`frameworkErrors`),
 * which run no hook.
 */
export function logAccess(fastify: FastifyInstance, sink: Sink): (request: FastifyRequest, reply: FastifyReply) => void {
  const redact = urlRedactor();
  const write = (request: FastifyRequest, reply: FastifyReply) => {
    // Not under `req`/`res`: pino-http's serializers expect the raw objects there.
    if (sink.enabled() && !QUIET.test(request.url)) sink.log({ msg: 'request completed', requestId: request.id, method: request.method, url: redact(request.url), statusCode: reply.statusCode, responseTime: Math.round(reply.elapsedTime) }, 'http');
  };
  // Callback form, not async: no promise per request (ADR 0270).
  fastify.addHook('onResponse', (request, reply, done) => {
    write(request, reply);
    done();
  });
  return write;
}

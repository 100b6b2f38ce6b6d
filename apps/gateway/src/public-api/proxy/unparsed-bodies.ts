import { dropContentTypeThatIsNoMediaType } from '@meld/platform';
import type { FastifyInstance } from 'fastify';

/**
 * Makes an encapsulated context of the gateway take every body as the raw request stream, to
 * forward untouched, never parsed here. A Content-Type that is no media type (`application/json,
 * text/plain`, `json`) was Fastify's own 415 before any handler: uncounted, without the
 * X-RateLimit-* every answer carries (ADR 0011), and not the spec's 400 for a body that is not
 * JSON. It names nothing, so it goes: the request is counted and answered like any other, and
 * the owning app refuses or reads its body as one sent without a Content-Type (ADR 0012).
 */
export function takeBodiesUnparsed(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.addHook('onRequest', dropContentTypeThatIsNoMediaType);
}

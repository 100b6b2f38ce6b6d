import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../pipeline/public-api';
import { setRateLimitHeaders } from '../rate-limit/rate-limit-headers';
import { BodyTooLarge, forward } from '../proxy/forward';
import type { Upstreams } from '../proxy/upstreams';
import { type Bucket, RateLimitUnavailable, type RateLimiter } from '../rate-limit/rate-limiter';

/** The OAuth endpoints at the API host root (product spec: anonymous, outside `/v1`; ADR 0145). */
export const OAUTH_METADATA_PATHS = ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource'] as const;
/** Registration metadata and forms are small; this is far above any legitimate one. */
export const OAUTH_BODY_LIMIT = 64 * 1024;
const RETRY_AFTER_S = '5';

export interface OAuthDoorDeps {
  limiter: RateLimiter;
  upstreams: Upstreams;
}

/**
 * Forwards `/oauth/*` and the two discovery documents to the oauth app without a principal
 * (its routes are `@InternalPublic`), counted per client IP in the `oauth` rate-limit class.
 * The client IP is the one the gateway resolved (MELD_TRUST_PROXY), sent alone as
 * X-Forwarded-For: the oauth app limits sign-in failures per IP and must not believe a
 * client-written header. The bearer/basic `Authorization` header is passed through here
 * (unlike on `/v1`): the token and revocation endpoints authenticate confidential clients with it.
 */
export class OAuthDoor {
  private readonly log = new Logger('gateway');

  constructor(private readonly deps: OAuthDoorDeps) {}

  async handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | void> {
    const bucket: Bucket = { cls: 'oauth', subject: `ip:${request.ip}`, plan: 's' };
    try {
      const state = await this.deps.limiter.hit(bucket);
      setRateLimitHeaders(reply, state);
      if (!state.allowed) return reply.code(429).header('retry-after', String(Math.max(1, state.reset - Math.floor(Date.now() / 1000)))).send();
      if (Number(request.headers['content-length'] ?? 0) > OAUTH_BODY_LIMIT) return tooLarge(reply);
      const headers: Record<string, string> = { 'x-request-id': request.id, 'x-forwarded-for': request.ip };
      if (request.headers.authorization) headers.authorization = request.headers.authorization;
      return await forward(this.deps.upstreams.pool('oauth'), request, reply, headers, OAUTH_BODY_LIMIT);
    } catch (err) {
      return this.failed(err, reply, bucket);
    }
  }

  private failed(err: unknown, reply: FastifyReply, bucket: Bucket) {
    if (reply.sent) return;
    if (err instanceof BodyTooLarge || (err as { cause?: unknown }).cause instanceof BodyTooLarge) return tooLarge(reply);
    if (err instanceof RateLimitUnavailable) {
      this.log.warn(err.message);
      setRateLimitHeaders(reply, this.deps.limiter.unavailableState(bucket));
      return sendError(reply.header('retry-after', RETRY_AFTER_S), 503, 'rate limiting is temporarily unavailable; retry later');
    }
    const code = (err as { code?: string }).code ?? '';
    this.log.warn(`upstream oauth failed: ${code} ${(err as Error).message}`);
    if (/TIMEOUT/.test(code)) return sendError(reply, 504, 'the oauth service did not answer in time');
    return sendError(reply.header('retry-after', RETRY_AFTER_S), 502, 'the oauth service is unavailable');
  }
}

const tooLarge = (reply: FastifyReply) => sendError(reply.header('connection', 'close'), 413, `request body larger than ${OAUTH_BODY_LIMIT} bytes`);

/** Mounts the door in its own encapsulated context: bodies are streamed to the oauth app, never parsed here. */
export function oauthDoorPlugin(door: OAuthDoor) {
  return async function oauthDoor(app: FastifyInstance): Promise<void> {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    const handler = (request: FastifyRequest, reply: FastifyReply) => door.handle(request, reply);
    app.route({ method: ['GET', 'POST'], url: '/oauth/*', handler });
    for (const url of OAUTH_METADATA_PATHS) app.get(url, handler);
  };
}

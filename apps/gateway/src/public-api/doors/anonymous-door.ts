import { errorSummary, type AppName } from '@meld/contracts';
import { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../pipeline/public-api';
import { BodyTooLarge, forward } from '../proxy/forward';
import type { Upstreams } from '../proxy/upstreams';
import { setRateLimitHeaders } from '../rate-limit/rate-limit-headers';
import type { LimitClass } from '../rate-limit/limits';
import { type Bucket, RateLimitUnavailable, type RateLimiter } from '../rate-limit/rate-limiter';

const RETRY_AFTER_S = '5';

export interface AnonymousDoorOptions {
  limiter: RateLimiter;
  upstreams: Upstreams;
  /** The app that serves these paths. */
  app: AppName;
  /** Rate-limit class, counted per client IP. */
  cls: LimitClass;
  bodyLimit: number;
  /** Pass the client's Authorization header (the OAuth token endpoint authenticates clients with it). */
  passAuthorization?: boolean;
}

/**
 * A door for anonymous routes outside `/v1` (the OAuth endpoints, ADR 0145; the SMS link
 * routes, ADR 0182): counted per client IP before anything else, forwarded to the owning app
 * without a principal (its routes are `@InternalPublic`). The client IP is the one the
 * gateway resolved (MELD_TRUST_PROXY), sent alone as X-Forwarded-For: the app may limit per
 * IP and must not believe a client-written header.
 */
export class AnonymousDoor {
  private readonly log = new Logger('gateway');

  constructor(private readonly options: AnonymousDoorOptions) {}

  async handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | void> {
    const { limiter, upstreams, app, cls, bodyLimit } = this.options;
    const bucket: Bucket = { cls, subject: `ip:${request.ip}`, plan: 's' };
    try {
      const state = await limiter.hit(bucket);
      setRateLimitHeaders(reply, state);
      if (!state.allowed) return reply.code(429).header('retry-after', String(Math.max(1, state.reset - Math.floor(Date.now() / 1000)))).send();
      if (Number(request.headers['content-length'] ?? 0) > bodyLimit) return this.tooLarge(reply);
      const headers: Record<string, string> = { 'x-request-id': request.id, 'x-forwarded-for': request.ip };
      if (this.options.passAuthorization && request.headers.authorization) headers.authorization = request.headers.authorization;
      return await forward(upstreams.pool(app), request, reply, headers, bodyLimit);
    } catch (err) {
      return this.failed(err, reply, bucket);
    }
  }

  private failed(err: unknown, reply: FastifyReply, bucket: Bucket) {
    if (reply.sent) return;
    if (err instanceof BodyTooLarge || (err as { cause?: unknown }).cause instanceof BodyTooLarge) return this.tooLarge(reply);
    if (err instanceof RateLimitUnavailable) {
      this.log.warn(err.message);
      setRateLimitHeaders(reply, this.options.limiter.unavailableState(bucket));
      return sendError(reply.header('retry-after', RETRY_AFTER_S), 503, 'rate limiting is temporarily unavailable; retry later');
    }
    const code = (err as { code?: string }).code ?? '';
    this.log.warn(`upstream ${this.options.app} failed: ${errorSummary(err)}`);
    if (/TIMEOUT/.test(code)) return sendError(reply, 504, `the ${this.options.app} service did not answer in time`);
    return sendError(reply.header('retry-after', RETRY_AFTER_S), 502, `the ${this.options.app} service is unavailable`);
  }

  private tooLarge(reply: FastifyReply) {
    return sendError(reply.header('connection', 'close'), 413, `request body larger than ${this.options.bodyLimit} bytes`);
  }
}

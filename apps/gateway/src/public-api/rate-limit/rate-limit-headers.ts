import type { FastifyReply } from 'fastify';
import { retryAfterSeconds } from './local-window';
import type { RateLimitState } from './rate-limiter';

export function setRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  reply.header('X-RateLimit-Limit', String(state.limit));
  reply.header('X-RateLimit-Remaining', String(state.remaining));
  reply.header('X-RateLimit-Reset', String(state.reset));
}

/** The headers of a refusal by a limit: X-RateLimit-* and when to come back. */
export function setRefusalHeaders(reply: FastifyReply, state: RateLimitState): void {
  setRateLimitHeaders(reply, state);
  reply.header('retry-after', String(retryAfterSeconds(state)));
}

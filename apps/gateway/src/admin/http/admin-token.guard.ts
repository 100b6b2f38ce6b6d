import { safeEqual } from '@meld/auth';
import { type CanActivate, type ExecutionContext, ForbiddenException, HttpException, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type RateLimitState } from '../../public-api/rate-limit/rate-limiter';
import { setRefusalHeaders } from '../../public-api/rate-limit/rate-limit-headers';
import { ADMIN_CONFIG, type AdminConfig } from './admin-config';
import { ADMIN_LIMITS, type AdminLimits } from './admin-limits';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/**
 * The admin API answers only to `Authorization: Bearer <MELD_ADMIN_TOKEN>`. The well-known
 * development token works from loopback only, whether it came from the default or was set
 * explicitly (`npm start` sets it), so a dev gateway bound to 0.0.0.0 is not an open door.
 * The peer address is the socket's, never X-Forwarded-For, which any client can write.
 * Each client IP (as MELD_TRUST_PROXY resolves it) has a request budget and a much smaller
 * budget of wrong tokens; once that is spent even the right token is refused until the
 * window ends, so guessing stays slow (ADR 0123).
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(
    @Inject(ADMIN_CONFIG) private readonly config: AdminConfig,
    @Inject(ADMIN_LIMITS) private readonly limits: AdminLimits,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const requests = this.limits.requests.hit(req.ip);
    if (!requests.allowed) throw tooMany(reply, requests, 'too many admin requests from this client; retry later');
    if (this.limits.failures.exhausted(req.ip)) throw tooMany(reply, this.limits.failures.peek(req.ip), 'too many wrong admin tokens from this client; retry later');
    if (this.config.loopbackOnly && !LOOPBACK.test(req.raw.socket.remoteAddress ?? '')) {
      throw new ForbiddenException('the default admin token works from loopback only: set MELD_ADMIN_TOKEN to use the admin API remotely');
    }
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization?.trim() ?? '');
    if (!match || !safeEqual(match[1], this.config.token)) {
      if (match) this.limits.failures.hit(req.ip);
      reply.header('www-authenticate', 'Bearer realm="meld-admin"');
      throw new UnauthorizedException(match ? 'invalid admin token' : 'missing admin token: send "Authorization: Bearer <MELD_ADMIN_TOKEN>"');
    }
    return true;
  }
}

function tooMany(reply: FastifyReply, state: RateLimitState, message: string): HttpException {
  setRefusalHeaders(reply, state);
  return new HttpException(message, 429);
}

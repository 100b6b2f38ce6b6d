import { safeEqual } from '@meld/auth';
import { type CanActivate, type ExecutionContext, ForbiddenException, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ADMIN_CONFIG, type AdminConfig } from './admin-config';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/**
 * The admin API answers only to `Authorization: Bearer <MELD_ADMIN_TOKEN>`. The well-known
 * development token works from loopback only, whether it came from the default or was set
 * explicitly (`npm start` sets it), so a dev gateway bound to 0.0.0.0 is not an open door.
 * The peer address is the socket's, never X-Forwarded-For, which any client can write.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(@Inject(ADMIN_CONFIG) private readonly config: AdminConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    if (this.config.loopbackOnly && !LOOPBACK.test(req.raw.socket.remoteAddress ?? '')) {
      throw new ForbiddenException('the default admin token works from loopback only: set MELD_ADMIN_TOKEN to use the admin API remotely');
    }
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization?.trim() ?? '');
    if (!match || !safeEqual(match[1], this.config.token)) {
      http.getResponse<FastifyReply>().header('www-authenticate', 'Bearer realm="meld-admin"');
      throw new UnauthorizedException(match ? 'invalid admin token' : 'missing admin token: send "Authorization: Bearer <MELD_ADMIN_TOKEN>"');
    }
    return true;
  }
}

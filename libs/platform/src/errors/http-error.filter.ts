import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { errorBody } from './error-body';

/**
 * Every error leaves in the `{statusCode, error, message, details?}` shape. Fastify's own
 * errors (body not JSON, body too large) keep their 4xx status; anything unexpected is a
 * logged 500 that reveals nothing internal.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly log = new Logger('http');

  catch(exception: unknown, host: ArgumentsHost) {
    if (host.getType() !== 'http') throw exception;
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const res = exception.getResponse();
      if (status === 429 && res === '') return reply.code(429).send('');
      // Health reports (terminus) are their own documented shape: pass them through.
      if (typeof res === 'object' && res !== null && !('message' in res) && 'status' in res) return reply.code(status).send(res);
      const body = typeof res === 'string' ? { message: res } : (res as { message?: unknown; details?: unknown });
      const message = Array.isArray(body.message) ? body.message.join('; ') : String(body.message ?? exception.message);
      return reply.code(status).send(errorBody(status, message, body.details));
    }
    const fastifyStatus = (exception as { statusCode?: number }).statusCode;
    if (typeof fastifyStatus === 'number' && fastifyStatus >= 400 && fastifyStatus < 500) {
      return reply.code(fastifyStatus).send(errorBody(fastifyStatus, (exception as Error).message));
    }
    this.log.error({ err: exception }, 'unhandled error');
    return reply.code(500).send(errorBody(500, 'internal error'));
  }
}

import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@meld/api';
import type { FastifyReply } from 'fastify';
import { SystemHealth } from './system-health';

/**
 * The public face of health: `/healthz` (the operator interface's system check: 200 only
 * when every app and store is ready), `/readyz` (the gateway's own stores) and `/livez`, each
 * a bare status. Which store is down, with its URL and error, is on the operations port only
 * (ops/ops-server.ts, ADR 0105).
 */
@ApiExcludeController()
@Controller()
export class SystemHealthController {
  constructor(private readonly health: SystemHealth) {}

  @Get('healthz')
  async system(@Res() reply: FastifyReply) {
    const { status } = await this.health.report();
    return reply.code(status === 'ok' ? 200 : 503).send({ status });
  }

  @Get('readyz')
  async ready(@Res() reply: FastifyReply) {
    const up = (await this.health.own()).status === 'up';
    return reply.code(up ? 200 : 503).send({ status: up ? 'ok' : 'error' });
  }

  @Get('livez')
  live() {
    return { status: 'ok' };
  }
}

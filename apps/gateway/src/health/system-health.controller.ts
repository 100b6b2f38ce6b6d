import { type AppName, INTERNAL_APPS } from '@meld/contracts';
import { READINESS_CHECKS, READINESS_TIMEOUT_MS, type ReadinessCheck } from '@meld/platform';
import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { APP_URLS } from '../upstreams/app-urls';

type Report = { status: 'up' | 'down'; error?: string; details?: unknown };

/**
 * The operator's single question "is Meld up?": 200 only when the gateway's own stores
 * and every app's /readyz answer 200; otherwise 503 with the app and store that are not.
 */
@ApiExcludeController()
@Controller()
export class SystemHealthController {
  constructor(
    @Inject(APP_URLS) private readonly urls: Record<AppName, string>,
    @Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[],
  ) {}

  @Get('healthz')
  async system(@Res() reply: FastifyReply) {
    const apps: Record<string, Report> = { gateway: await this.own() };
    await Promise.all(INTERNAL_APPS.map(async (app) => (apps[app] = await this.probe(this.urls[app]))));
    const down = Object.entries(apps).filter(([, r]) => r.status === 'down').map(([a]) => a);
    return reply.code(down.length ? 503 : 200).send({ status: down.length ? 'error' : 'ok', down, apps });
  }

  private async own(): Promise<Report> {
    const failed: Record<string, string> = {};
    await Promise.all(
      this.checks.map((c) =>
        c.check(AbortSignal.timeout(READINESS_TIMEOUT_MS)).catch((e: Error) => void (failed[c.name] = e.message)),
      ),
    );
    return Object.keys(failed).length ? { status: 'down', details: failed } : { status: 'up' };
  }

  private async probe(base: string): Promise<Report> {
    try {
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(READINESS_TIMEOUT_MS + 500) });
      const body = (await res.json().catch(() => undefined)) as { error?: unknown } | undefined;
      return res.ok ? { status: 'up' } : { status: 'down', details: body?.error ?? body };
    } catch (err) {
      return { status: 'down', error: `unreachable: ${(err as Error).message}` };
    }
  }
}

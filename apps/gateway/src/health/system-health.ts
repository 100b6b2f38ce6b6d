import { type AppName, INTERNAL_APPS } from '@meld/contracts';
import { READINESS_CHECKS, READINESS_TIMEOUT_MS, runReadinessCheck, type ReadinessCheck } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';
import { APP_URLS } from '../upstreams/app-urls';

export type Report = { status: 'up' | 'down'; error?: string; details?: unknown };
export interface SystemReport {
  status: 'ok' | 'error';
  down: string[];
  apps: Record<string, Report>;
}

/**
 * The operator's single question "is Meld up?": ok only when the gateway's own stores and
 * every app's /readyz answer. The public port says only ok or error; the details (which store,
 * its error text) are for the operations port (ADR 0105).
 */
@Injectable()
export class SystemHealth {
  constructor(
    @Inject(APP_URLS) private readonly urls: Record<AppName, string>,
    @Inject(READINESS_CHECKS) private readonly checks: ReadinessCheck[],
  ) {}

  async report(): Promise<SystemReport> {
    const apps: Record<string, Report> = { gateway: await this.own() };
    await Promise.all(INTERNAL_APPS.map(async (app) => (apps[app] = await this.probe(this.urls[app]))));
    const down = Object.entries(apps).filter(([, r]) => r.status === 'down').map(([a]) => a);
    return { status: down.length ? 'error' : 'ok', down, apps };
  }

  /** The gateway's own stores. */
  async own(): Promise<Report> {
    const failed: Record<string, string> = {};
    await Promise.all(this.checks.map((c) => runReadinessCheck(c, AbortSignal.timeout(READINESS_TIMEOUT_MS)).catch((e: Error) => void (failed[c.name] = e.message))));
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

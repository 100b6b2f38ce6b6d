import { type AppName, INTERNAL_APPS } from '@meld/contracts';
import { READINESS_CHECKS, READINESS_TIMEOUT_MS, runReadinessCheck, type ReadinessCheck } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';
import { APP_URLS } from '../upstreams/app-urls';

/** `degraded`: the app answers and serves, but a peer it reports is lost (ADR 0348): not ready for the system check. */
export type Report = { status: 'up' | 'degraded' | 'down'; error?: string; details?: unknown };
export interface SystemReport {
  status: 'ok' | 'error';
  /** The apps not `up`: down or degraded. */
  down: string[];
  apps: Record<string, Report>;
}

/**
 * The operator's single question "is Meld up?": ok only when the gateway's own stores and
 * every app's /readyz answer, and answer `ok` (a degraded app, ready but missing a peer it
 * reports, is not: messaging without its SMSC session, ADR 0348). The public port says only ok
 * or error; the details (which store, its error text) are for the operations port (ADR 0105).
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
    const down = Object.entries(apps).filter(([, r]) => r.status !== 'up').map(([a]) => a);
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
      const body = (await res.json().catch(() => undefined)) as { status?: string; info?: Record<string, { status?: string }>; error?: unknown } | undefined;
      if (!res.ok) return { status: 'down', details: body?.error ?? body };
      if (body?.status !== 'degraded') return { status: 'up' };
      return { status: 'degraded', details: Object.fromEntries(Object.entries(body.info ?? {}).filter(([, c]) => c.status === 'degraded')) };
    } catch (err) {
      return { status: 'down', error: `unreachable: ${(err as Error).message}` };
    }
  }
}

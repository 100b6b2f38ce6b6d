import type { INestApplication } from '@nestjs/common';
import { bootstrapApp, meldAppModule } from '@meld/platform';
import { testEnv } from '@meld/testing';
import { AdminModule } from '../../src/admin/admin.module';

export const TEST_ADMIN_TOKEN = 'meld-test-admin';

/** A parsed JSON response body: its shape is what the assertions check. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface AdminGateway {
  app: INestApplication;
  base: string;
  /** Calls the admin API with the test admin token (or `token`); returns status, body and headers. */
  call(method: string, path: string, body?: unknown, token?: string | null): Promise<{ status: number; body: Json; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * The gateway's admin module alone on the test stores, on a random port: the admin API is
 * independent of the public pipeline, so its tests do not boot (or wait for) the rest.
 * `adminToken: null` boots it without MELD_ADMIN_TOKEN (the loopback-only default).
 */
export async function startAdminGateway({ adminToken = TEST_ADMIN_TOKEN as string | null, host = '127.0.0.1', rateLimits = undefined as object | undefined } = {}): Promise<AdminGateway> {
  const env = testEnv();
  const appEnv = {
    LOG_LEVEL: 'silent',
    MELD_ALLOW_DEV_SECRETS: '1',
    MELD_POSTGRES_URL: env.postgresUrl,
    MELD_REDIS_URL: env.redisUrl,
  };
  const saved = process.env.MELD_ADMIN_TOKEN;
  const savedLimits = process.env.MELD_RATE_LIMITS;
  if (adminToken === null) delete process.env.MELD_ADMIN_TOKEN;
  else process.env.MELD_ADMIN_TOKEN = adminToken;
  if (rateLimits) process.env.MELD_RATE_LIMITS = JSON.stringify(rateLimits);
  let app: INestApplication;
  try {
    const def = { name: 'gateway-admin-spec', port: 0, stores: ['postgres' as const, 'redis' as const], publicFacing: true, imports: [AdminModule] };
    app = await bootstrapApp({ app: def.name, module: meldAppModule(def, appEnv), host, port: 0 });
  } finally {
    if (saved === undefined) delete process.env.MELD_ADMIN_TOKEN;
    else process.env.MELD_ADMIN_TOKEN = saved;
    if (savedLimits === undefined) delete process.env.MELD_RATE_LIMITS;
    else process.env.MELD_RATE_LIMITS = savedLimits;
  }
  const port = Number(new URL((await app.getUrl()).replace('[::1]', '127.0.0.1').replace('[::]', '127.0.0.1')).port);
  const base = `http://127.0.0.1:${port}`;
  await waitForPostgres(base);
  return {
    app,
    base,
    async call(method, path, body, token = adminToken ?? 'meld-dev-admin') {
      const res = await fetch(`${base}/admin/v1${path}`, {
        method,
        headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
    },
    close: () => app.close(),
  };
}

/** Postgres connects in the background; the first test must not race it. */
async function waitForPostgres(base: string) {
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${base}/readyz`).catch(() => null);
    if (res?.status === 200) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('admin gateway not ready');
}

/** A name no other run uses, so tests can share the test database. */
export const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

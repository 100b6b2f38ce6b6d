import { APP_NAMES, appUrlEnv } from '@meld/contracts';
import { TcpProxy, testEnv, waitFor } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { startGateway } from './support/gateway';
import { startStubUpstream } from './support/stub-upstream';
import { createTenancy, createToken, openTestDb } from './support/tenancy';

const ADMIN_TOKEN = 'redis-stall-spec-admin-token';
const REDIS_TIMEOUT_MS = 300;
/** The whole request, Redis timeout included, on a busy 2-core machine. */
const BUDGET_MS = REDIS_TIMEOUT_MS + 700;

// Redis stalls (connections open, no answer) rather than refuses: every Redis client has a
// command timeout (ADR 0122), so the gateway answers 503 + Retry-After within its budget
// instead of holding the request for as long as Redis is silent.
describe('gateway with a stalled Redis', () => {
  let db: DataSource;
  let proxy: TcpProxy;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let stub: Awaited<ReturnType<typeof startStubUpstream>>;
  let t: Awaited<ReturnType<typeof createTenancy>>;
  let token: { id: string; token: string };

  beforeAll(async () => {
    db = await openTestDb();
    stub = await startStubUpstream();
    const env = testEnv();
    proxy = await TcpProxy.start(env.redisUrl);
    gateway = await startGateway({
      MELD_POSTGRES_URL: env.postgresUrl,
      MELD_REDIS_URL: proxy.via(env.redisUrl),
      MELD_REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
      MELD_ADMIN_TOKEN: ADMIN_TOKEN,

      MELD_RATE_LIMIT_NAMESPACE: `redis-stall-spec-${process.pid}`,
      ...Object.fromEntries(APP_NAMES.filter((a) => a !== 'gateway').map((a) => [appUrlEnv(a), stub.url])),
    });
    await waitFor('gateway ready', async () => (await fetch(`${gateway.url}/readyz`)).status === 200);
    t = await createTenancy(db);
    token = await createToken(db, { organizationId: t.org.id, scopes: ['PROJECT_AUDIENCE_READ'], projects: [t.project.uid] });
  }, 30000);

  afterAll(async () => {
    proxy?.unpause();
    await gateway?.close();
    await proxy?.stop();
    await stub?.close();
    await db?.destroy();
  });

  const timed = async (path: string, init: RequestInit = {}) => {
    const started = Date.now();
    const res = await fetch(`${gateway.url}${path}`, { ...init, signal: AbortSignal.timeout(10_000) });
    return { res, body: (await res.json()) as { message?: string }, ms: Date.now() - started };
  };
  const publicCall = () => timed(`/v1/project/${t.project.uid}`, { headers: { authorization: `Bearer ${token.token}` } });

  it('answers a public request 503 with Retry-After within its budget, and recovers when Redis answers again', async () => {
    expect((await publicCall()).res.status).toBe(200);
    proxy.pause();
    try {
      for (let i = 0; i < 3; i++) {
        const { res, body, ms } = await publicCall();
        expect({ status: res.status, retryAfter: res.headers.get('retry-after'), message: body.message }).toEqual({
          status: 503,
          retryAfter: expect.stringMatching(/^\d+$/),
          message: 'rate limiting is temporarily unavailable; retry later',
        });
        expect(ms).toBeLessThan(BUDGET_MS);
      }
    } finally {
      proxy.unpause();
    }
    await waitFor('public requests served again', async () => (await publicCall()).res.status === 200);
  });

  it('answers an admin call that must tell the gateways (token revocation) within its budget', async () => {
    const victim = await createToken(db, { organizationId: t.org.id, scopes: ['PROJECT_AUDIENCE_READ'], projects: ['*'] });
    proxy.pause();
    try {
      const { res, body, ms } = await timed(`/admin/v1/tokens/${victim.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect({ status: res.status, message: body.message }).toEqual({ status: 503, message: expect.stringContaining('Redis unavailable') });
      expect(ms).toBeLessThan(BUDGET_MS);
    } finally {
      proxy.unpause();
    }
  });
});

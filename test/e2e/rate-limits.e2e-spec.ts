import { APP_NAMES, appUrlEnv } from '@meld/contracts';
import { TcpProxy, testEnv, waitFor } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { startGateway } from '../../apps/gateway/test/support/gateway';
import { startStubUpstream } from '../../apps/gateway/test/support/stub-upstream';
import { createDataSourceRow, createOrganization, createProject, createToken, openTestDb } from '../../apps/gateway/test/support/tenancy';

// Rate limits as a client sees them, on plan `s` with a configured tiny window so the test
// is fast: exact headers, 429 with an empty body, the reset honoured, classes and buckets
// counted apart, and Redis down → 503 with Retry-After (never an open door). The gateway
// runs in process with Redis behind a TCP proxy the test can cut; a stub plays the apps.
const WINDOW_S = 3;
const LIMITS = {
  large: { s: 3, m: 5, windowSeconds: WINDOW_S },
  standard: { s: 2, windowSeconds: WINDOW_S },
  ingest: { s: 2, windowSeconds: WINDOW_S },
  anonymous: { limit: 2, windowSeconds: WINDOW_S },
};

type Headers3 = { limit: string | null; remaining: string | null; reset: string | null };
const rl = (res: Response): Headers3 => ({
  limit: res.headers.get('x-ratelimit-limit'),
  remaining: res.headers.get('x-ratelimit-remaining'),
  reset: res.headers.get('x-ratelimit-reset'),
});
const sleepUntil = (unixSeconds: number) => new Promise((r) => setTimeout(r, Math.max(0, unixSeconds * 1000 - Date.now()) + 50));

describe('rate limits', () => {
  let db: DataSource;
  let redisProxy: TcpProxy;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let stub: Awaited<ReturnType<typeof startStubUpstream>>;

  const get = (path: string, token?: string, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}${path}`, { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
  /** Starts right after a window boundary, so a burst of a few requests stays in one window. */
  const freshWindow = async (probe: () => Promise<Response>) => sleepUntil(Number((await probe()).headers.get('x-ratelimit-reset')));

  beforeAll(async () => {
    const env = testEnv();
    db = await openTestDb();
    stub = await startStubUpstream();
    redisProxy = await TcpProxy.start(env.redisUrl);
    gateway = await startGateway({
      MELD_POSTGRES_URL: env.postgresUrl,
      MELD_REDIS_URL: redisProxy.via(env.redisUrl),
      MELD_ALLOW_DEV_SECRETS: '1',
      MELD_RATE_LIMITS: JSON.stringify(LIMITS),
      MELD_RATE_LIMIT_NAMESPACE: `rate-limit-spec-${process.pid}`,
      ...Object.fromEntries(APP_NAMES.filter((a) => a !== 'gateway').map((a) => [appUrlEnv(a), stub.url])),
    });
    await waitFor('gateway ready', async () => (await fetch(`${gateway.url}/readyz`)).status === 200);
  }, 30000);

  afterAll(async () => {
    await gateway?.close();
    await redisProxy?.stop();
    await stub?.close();
    await db?.destroy();
  });

  it('plan s, class large: exact headers, then 429 with an empty body, then the reset is honoured', async () => {
    const org = await createOrganization(db, { plan: 's' });
    const token = await createToken(db, { organizationId: org.id, projects: ['*'] });
    await freshWindow(() => get('/v1/', token.token));

    const seen: Headers3[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await get('/v1/', token.token);
      expect(res.status).toBe(200);
      seen.push(rl(res));
    }
    const reset = Number(seen[0].reset);
    expect(seen).toEqual([
      { limit: '3', remaining: '2', reset: String(reset) },
      { limit: '3', remaining: '1', reset: String(reset) },
      { limit: '3', remaining: '0', reset: String(reset) },
    ]);
    expect(reset % WINDOW_S).toBe(0);
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + WINDOW_S);

    const limited = await get('/v1/', token.token);
    expect(limited.status).toBe(429);
    expect(await limited.text()).toBe('');
    expect(rl(limited)).toEqual({ limit: '3', remaining: '0', reset: String(reset) });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    await sleepUntil(reset);
    const again = await get('/v1/', token.token);
    expect(again.status).toBe(200);
    expect(rl(again)).toEqual({ limit: '3', remaining: '2', reset: String(reset + WINDOW_S) });
  });

  it('follows the plan and counts per organization and class', async () => {
    const m = await createOrganization(db, { plan: 'm' });
    const mToken = await createToken(db, { organizationId: m.id, projects: ['*'] });
    expect(rl(await get('/v1/', mToken.token)).limit).toBe('5');

    const org = await createOrganization(db, { plan: 's' });
    const project = await createProject(db, org.id);
    const a = await createToken(db, { organizationId: org.id, projects: ['*'] });
    const b = await createToken(db, { organizationId: org.id, projects: ['*'] });
    await freshWindow(() => get(`/v1/project/${project.uid}/specs/events`, a.token));
    // Two tokens of one organization share its allowance; the large class is counted apart.
    expect((await get(`/v1/project/${project.uid}/specs/events`, a.token)).status).toBe(200);
    expect((await get(`/v1/project/${project.uid}/specs/attributes`, b.token)).status).toBe(200);
    expect((await get(`/v1/project/${project.uid}/specs/events`, b.token)).status).toBe(429);
    const large = await get(`/v1/project/${project.uid}`, a.token);
    expect(large.status).toBe(200);
    expect(rl(large).limit).toBe('3');
  });

  it('counts ingest per data source and per endpoint', async () => {
    const org = await createOrganization(db, { plan: 's' });
    const project = await createProject(db, org.id);
    const ds1 = await createDataSourceRow(db, project.id);
    const ds2 = await createDataSourceRow(db, project.id);
    const t1 = await createToken(db, { organizationId: org.id, kind: 'datasource', dataSourceId: ds1.id });
    const t2 = await createToken(db, { organizationId: org.id, kind: 'datasource', dataSourceId: ds2.id });
    const stream = (ds: string, suffix = '') => `/v1/project/${project.uid}/datasource/${ds}/stream${suffix}`;
    await freshWindow(() => get(stream(ds1.id), t1.token));

    expect((await get(stream(ds1.id), t1.token)).status).toBe(200);
    expect((await get(stream(ds1.id), t1.token)).status).toBe(200);
    expect((await get(stream(ds1.id), t1.token)).status).toBe(429);
    // Another endpoint of the same data source, and another data source, have their own counters.
    expect(rl(await get(stream(ds1.id, '/specs/attributes'), t1.token))).toMatchObject({ limit: '2', remaining: '1' });
    expect(rl(await get(stream(ds2.id), t2.token))).toMatchObject({ limit: '2', remaining: '1' });
    // A token refused on ds1 (not its data source) does not spend ds1's quota.
    await freshWindow(() => get(stream(ds2.id, '/specs/events'), t2.token));
    expect((await get(stream(ds1.id), t2.token)).status).toBe(404);
    expect(rl(await get(stream(ds1.id), t1.token))).toMatchObject({ remaining: '1' });
    expect((await get(stream(ds1.id), t1.token)).status).toBe(200);
  });

  it('throttles callers without a valid token per client IP', async () => {
    const ip = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
    await freshWindow(() => get('/v1/', undefined, { 'x-forwarded-for': ip }));
    const first = await get('/v1/', undefined, { 'x-forwarded-for': ip });
    expect(first.status).toBe(401);
    expect(rl(first)).toMatchObject({ limit: '2', remaining: '1' });
    expect((await get('/v1/', `mld_pt_${'B'.repeat(43)}`, { 'x-forwarded-for': ip })).status).toBe(401);
    const limited = await get('/v1/', `mld_pt_${'C'.repeat(43)}`, { 'x-forwarded-for': ip });
    expect(limited.status).toBe(429);
    expect(await limited.text()).toBe('');
    expect((await get('/v1/', undefined, { 'x-forwarded-for': '192.0.2.1' })).status).toBe(401);
  });

  it('answers 503 with Retry-After while Redis is down, never an open door, and recovers', async () => {
    const org = await createOrganization(db, { plan: 's' });
    const token = await createToken(db, { organizationId: org.id, projects: ['*'] });
    expect((await get('/v1/', token.token)).status).toBe(200);
    await redisProxy.stop();
    try {
      const down = await waitFor('503 while Redis is down', async () => {
        const res = await get('/v1/', token.token);
        return res.status === 503 ? res : undefined;
      });
      expect(down.headers.get('retry-after')).toBe('5');
      expect(await down.json()).toEqual({ statusCode: 503, error: 'Service Unavailable', message: 'rate limiting is temporarily unavailable; retry later' });
      expect(rl(down)).toMatchObject({ limit: '3', remaining: '0' });
      for (let i = 0; i < 5; i++) expect((await get('/v1/', token.token)).status).toBe(503);
    } finally {
      await redisProxy.resume();
    }
    await waitFor('200 once Redis is back', async () => (await get('/v1/', token.token)).status === 200, { timeoutMs: 15000 });
  });
});

import { randomBytes, randomUUID } from 'node:crypto';
import { DEV_PRINCIPAL_MASTER_KEY, PrincipalKeyring, hashToken } from '@meld/auth';
import { APP_NAMES, type AppName } from '@meld/contracts';
import { requestIdOf } from '@meld/platform';
import { testEnv } from '@meld/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { TenancyStore } from '../src/public-api/access/tenancy-store';
import { TokenStore } from '../src/public-api/access/token-store';
import { PublicApi } from '../src/public-api/pipeline/public-api';
import { publicApiPlugin } from '../src/public-api/pipeline/public-api.plugin';
import { Upstreams } from '../src/public-api/proxy/upstreams';
import { resolveRateLimits } from '../src/public-api/rate-limit/limits';
import { LocalWindow, localWindow } from '../src/public-api/rate-limit/local-window';
import { RateLimiter } from '../src/public-api/rate-limit/rate-limiter';
import { startStubUpstream } from './support/stub-upstream';
import { createTenancy, createToken, openTestDb } from './support/tenancy';
import { awayFromWindowEdge } from './support/window-edge';

const NEGATIVE_TTL_MS = 1500;
const AUTH_FAILURES = 5;
const CLIENT_LIMIT = 40;

// What an invalid or throttled caller costs Postgres (ADR 0123): the pipeline on real
// Postgres and Redis with a query counter around the gateway's Postgres handle.
describe('query cost of invalid and throttled callers', () => {
  let db: DataSource;
  let redis: Redis;
  let app: FastifyInstance;
  let stub: Awaited<ReturnType<typeof startStubUpstream>>;
  let t: Awaited<ReturnType<typeof createTenancy>>;
  let queries = 0;

  const randomToken = () => `mld_pt_${randomBytes(32).toString('base64url')}`;
  let base: string;
  const call = async (token: string | undefined, ip: string) => {
    const res = await fetch(`${base}/v1/project/${t.project.uid}`, { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'x-forwarded-for': ip } });
    return { statusCode: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
  };

  beforeAll(async () => {
    db = await openTestDb();
    redis = new Redis(testEnv().redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    stub = await startStubUpstream();
    t = await createTenancy(db);
    const counted = {
      get isInitialized() {
        return db.isInitialized;
      },
      query: (sql: string, params?: unknown[]) => {
        queries++;
        return db.query(sql, params);
      },
    };
    const limits = resolveRateLimits(JSON.stringify({ authFailures: { limit: AUTH_FAILURES }, anonymous: { limit: 100000 } }));
    const api = new PublicApi({
      tokens: new TokenStore(counted, 60_000, NEGATIVE_TTL_MS, 'https://api.meld.test/v1'),
      tenancy: new TenancyStore(counted, 60_000),
      limiter: new RateLimiter(redis, limits, `query-cost-spec-${randomUUID()}`),
      clients: new LocalWindow(60_000, CLIENT_LIMIT),
      authFailures: localWindow(limits, 'authFailures'),
      upstreams: new Upstreams(Object.fromEntries(APP_NAMES.map((a) => [a, stub.url])) as Record<AppName, string>),
      db: counted,
      principalKeys: new PrincipalKeyring(DEV_PRINCIPAL_MASTER_KEY),
      publicUrl: 'https://api.meld.test',
    });
    app = Fastify({ genReqId: requestIdOf, trustProxy: true });
    await app.register(publicApiPlugin(api));
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await app?.close();
    await stub?.close();
    redis?.disconnect();
    await db?.destroy();
  });

  it('a repeated unknown token costs one query per negative TTL, and a token created meanwhile works after it', async () => {
    const token = await createToken(db, { organizationId: t.org.id, scopes: ['PROJECT_AUDIENCE_READ'], projects: [t.project.uid] });
    await db.query('UPDATE tokens SET secret_hash = $1 WHERE id = $2', [randomBytes(32).toString('hex'), token.id]); // not there yet
    const before = queries;
    for (let i = 0; i < 3; i++) expect((await call(token.token, '10.1.0.1')).statusCode).toBe(401);
    expect(queries - before).toBe(1);
    await db.query('UPDATE tokens SET secret_hash = $1 WHERE id = $2', [hashToken(token.token), token.id]); // now created
    expect((await call(token.token, '10.1.0.2')).statusCode).toBe(401); // still the cached "unknown"
    await new Promise((r) => setTimeout(r, NEGATIVE_TTL_MS + 100));
    expect((await call(token.token, '10.1.0.2')).statusCode).toBe(200);
  });

  it('a client guessing tokens gets 429 with no query once its failed-authentication budget is spent; cached good tokens still pass', async () => {
    const good = await createToken(db, { organizationId: t.org.id, scopes: ['PROJECT_AUDIENCE_READ'], projects: [t.project.uid] });
    const ip = '10.2.0.1';
    await awayFromWindowEdge(60_000);
    expect((await call(good.token, ip)).statusCode).toBe(200); // cached now
    const before = queries;
    const answers: number[] = [];
    for (let i = 0; i < 30; i++) answers.push((await call(randomToken(), ip)).statusCode);
    expect(answers.slice(0, AUTH_FAILURES)).toEqual(Array(AUTH_FAILURES).fill(401));
    expect(answers.slice(AUTH_FAILURES)).toEqual(Array(30 - AUTH_FAILURES).fill(429));
    expect(queries - before).toBe(AUTH_FAILURES);
    const refused = await call(randomToken(), ip);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    // Like every 429: an empty body, and when to come back (system design §4).
    expect(refused.body).toBe('');
    expect(refused.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    expect((await call(good.token, ip)).statusCode).toBe(200);
    expect((await call(randomToken(), '10.2.0.2')).statusCode).toBe(401); // another client is not affected
  });

  it('a client over its request limit gets 429 before any lookup', async () => {
    const ip = '10.3.0.1';
    await awayFromWindowEdge(60_000);
    const before = queries;
    const answers: number[] = [];
    for (let i = 0; i < CLIENT_LIMIT + 5; i++) answers.push((await call(undefined, ip)).statusCode);
    expect(answers.filter((s) => s === 429)).toHaveLength(5);
    const token = randomToken();
    const res = await call(token, ip);
    expect(res.statusCode).toBe(429);
    expect(res.body).toBe('');
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(res.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    expect(res.headers['x-ratelimit-limit']).toBe(String(CLIENT_LIMIT));
    expect(queries - before).toBe(0);
  });
});

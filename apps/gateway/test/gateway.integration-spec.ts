import { connect } from 'node:net';
import { TENANCY_CHANGED_CHANNEL, decodePrincipal, devPrincipalKey } from '@meld/auth';
import { APP_NAMES, appUrlEnv } from '@meld/contracts';
import { ProjectEntity } from '@meld/db';
import { testEnv, waitFor } from '@meld/testing';
import Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { startGateway } from './support/gateway';
import { startStubUpstream } from './support/stub-upstream';
import { createDataSourceRow, createOrganization, createProject, createToken, openTestDb, revokeToken } from './support/tenancy';

// The gateway app itself (Nest module, caches, Redis subscriptions) booted in process, with
// a stub in place of the internal apps. The cache TTL is a minute here, so anything that
// changes within a test proves the pub/sub invalidation, not the TTL.
describe('gateway app', () => {
  let db: DataSource;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let stub: Awaited<ReturnType<typeof startStubUpstream>>;

  const get = (path: string, token: string) => fetch(`${gateway.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  /** One request written as is (fetch cannot send an absolute-form target); resolves with the status line. */
  const rawGet = (target: string, token?: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(gateway.url).port), '127.0.0.1', () =>
        socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}Connection: close\r\n\r\n`),
      );
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1'))).on('end', () => resolve(answer.split('\r\n')[0])).on('error', reject);
    });

  beforeAll(async () => {
    db = await openTestDb();
    stub = await startStubUpstream();
    const env = testEnv();
    gateway = await startGateway({
      MELD_POSTGRES_URL: env.postgresUrl,
      MELD_REDIS_URL: env.redisUrl,
      MELD_ALLOW_DEV_SECRETS: '1',
      MELD_GATEWAY_CACHE_TTL_MS: '60000',
      MELD_RATE_LIMIT_NAMESPACE: `gateway-spec-${process.pid}`,
      ...Object.fromEntries(APP_NAMES.filter((a) => a !== 'gateway').map((a) => [appUrlEnv(a), stub.url])),
    });
    await waitFor('gateway connected to postgres', async () => (await fetch(`${gateway.url}/readyz`)).status === 200);
  }, 30000);

  afterAll(async () => {
    await gateway?.close();
    await stub?.close();
    await db?.destroy();
  });

  it('GET /v1/ describes the token: reachable projects, organization, strictest data mode, data policy, scopes', async () => {
    const org = await createOrganization(db, { plan: 'm', funds: 12.5 });
    const open = await createProject(db, org.id);
    const masked = await createProject(db, org.id, { dataMode: 'anonymized' });
    await createProject(db, org.id, { dataMode: 'blocked' }); // not reachable by the token below
    const scopes = ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC'] as const;
    const token = await createToken(db, { organizationId: org.id, scopes: [...scopes], projects: [open.uid, masked.uid] });

    const res = await get('/v1/', token.token);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { entity: Record<string, unknown>; metadata: Record<string, unknown> };
    expect(body.entity).toMatchObject({
      id: token.id,
      kind: 'product',
      prefix: token.token.slice(0, 12),
      // With an offset, as every timestamp Meld answers (libs/api time.ts; the admin token read's too).
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/),
      projects: expect.arrayContaining([
        { id: open.id, uid: open.uid, name: open.name },
        { id: masked.id, uid: masked.uid, name: masked.name },
      ]),
    });
    expect((body.entity.projects as unknown[]).length).toBe(2);
    expect(body.metadata).toEqual({
      organization: { id: org.id, name: org.name, plan: 'm', apiTier: 'standard' },
      dataMode: 'anonymized',
      dataPolicy: { mayReadContactData: true, mayReadPii: false },
      scopes: [...scopes],
    });
    expect(res.headers.get('x-ratelimit-limit')).toBe('600');
    expect((await get('/v1', token.token)).status).toBe(200);
  });

  it('counts a /v1 path whose percent-encoding does not decode like any other request: X-RateLimit-*, then its 400 (ADR 0011)', async () => {
    const org = await createOrganization(db);
    const token = await createToken(db, { organizationId: org.id, scopes: ['PROJECT_AUDIENCE_READ'], projects: ['*'] });
    const remaining = async (path: string, bearer?: string) => {
      const res = await fetch(`${gateway.url}${path}`, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
      const body = (await res.json()) as { message: string };
      expect([path, res.status, body.message, res.headers.get('x-ratelimit-limit'), res.headers.get('x-request-id')]).toEqual([path, 400, expect.stringContaining('percent-encoding'), expect.stringMatching(/^\d+$/), expect.any(String)]);
      return Number(res.headers.get('x-ratelimit-remaining'));
    };
    // Against the token's organization in the standard class, as an unknown path: each one spends the budget.
    const first = await remaining('/v1/project/%ZZ', token.token);
    expect(await remaining('/v1/project/%ZZ/audience/count', token.token)).toBe(first - 1);
    // Without a token, against the client's address (anonymous class), as a 401 is.
    const anonymous = await remaining('/v1/%ZZ');
    expect(await remaining('/v1/%ZZ')).toBe(anonymous - 1);
    // Outside /v1, the router's refusal as before.
    expect((await fetch(`${gateway.url}/docs/%ZZ`)).headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('GET /v1/ shows funds only with ACCOUNT_READ, and every project for a "*" token', async () => {
    const org = await createOrganization(db, { dataMode: 'blocked', funds: 42 });
    const p1 = await createProject(db, org.id);
    const p2 = await createProject(db, org.id, { dataMode: 'normal' });
    const token = await createToken(db, { organizationId: org.id, scopes: ['ACCOUNT_READ', 'PROJECT_AUDIENCE_READ'], projects: ['*'] });
    const body = (await (await get('/v1/', token.token)).json()) as { entity: { projects: Array<{ uid: string }> }; metadata: Record<string, unknown> };
    expect(body.entity.projects.map((p) => p.uid).sort()).toEqual([p1.uid, p2.uid].sort());
    expect(body.metadata).toMatchObject({ organization: { funds: 42 }, dataMode: 'blocked', dataPolicy: { mayReadContactData: false, mayReadPii: false } });
  });

  it('a revoked token gets 401 on the very next request (pub/sub eviction, not the TTL)', async () => {
    const org = await createOrganization(db);
    const project = await createProject(db, org.id);
    const token = await createToken(db, { organizationId: org.id, projects: ['*'] });
    expect((await get(`/v1/project/${project.uid}`, token.token)).status).toBe(200);
    await revokeToken(db, token.id);
    await waitFor('revocation applied', async () => (await get(`/v1/project/${project.uid}`, token.token)).status === 401, { timeoutMs: 2000, intervalMs: 20 });
    expect(await (await get('/v1/', token.token)).json()).toMatchObject({ statusCode: 401, message: 'token revoked' });
  });

  it('drops cached projects when the tenancy changes (data mode reaches the principal at once)', async () => {
    const org = await createOrganization(db);
    const project = await createProject(db, org.id);
    const ds = await createDataSourceRow(db, project.id);
    const token = await createToken(db, { organizationId: org.id, kind: 'datasource', dataSourceId: ds.id });
    const path = `/v1/project/${project.uid}/datasource/${ds.id}/stream`;
    expect((await get(path, token.token)).status).toBe(200);
    const mode = () => JSON.parse(Buffer.from(String(stub.last().headers['x-meld-principal']).split('.')[0], 'base64url').toString()).project.dataMode;
    expect(mode()).toBe('normal');
    await db.getRepository(ProjectEntity).update({ id: project.id }, { dataMode: 'blocked' });
    const redis = new Redis(testEnv().redisUrl);
    await redis.publish(TENANCY_CHANGED_CHANNEL, project.id);
    redis.disconnect();
    await waitFor('new data mode in the principal', async () => (await get(path, token.token)).status === 200 && mode() === 'blocked', { timeoutMs: 2000, intervalMs: 20 });
  });

  it('reads a request in absolute-form as its path and query: the app gets and the principal binds the origin-form, never the client\'s host (RFC 9112 §3.2.2)', async () => {
    const org = await createOrganization(db);
    const project = await createProject(db, org.id);
    const token = await createToken(db, { organizationId: org.id, projects: ['*'] });
    expect(await rawGet(`http://elsewhere.example/v1/project/${project.uid}?x=1`, token.token)).toBe('HTTP/1.1 200 OK');
    const seen = stub.last();
    expect(seen.url).toBe(`/v1/project/${project.uid}?x=1`);
    expect(() => decodePrincipal(String(seen.headers['x-meld-principal']), { method: 'GET', url: seen.url, app: 'audience', requestId: String(seen.headers['x-request-id']) }, devPrincipalKey('audience'))).not.toThrow();
    // The SMS link door too (its code must not reach a log line as a host-prefixed path the redaction does not know).
    expect(await rawGet('HTTPS://elsewhere.example:8443/l/AbCdEf12')).toBe('HTTP/1.1 200 OK');
    expect(stub.last().url).toBe('/l/AbCdEf12');
  });

  it('leaves the gateway\'s own routes to it (health, OpenAPI, docs, operator API); metrics are on the operations port only', async () => {
    expect((await fetch(`${gateway.url}/livez`)).status).toBe(200);
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/v1/openapi.json`)).status).toBe(200);
    expect((await fetch(`${gateway.url}/docs`)).status).toBe(200);
    const admin = await fetch(`${gateway.url}/admin/v1/organizations/x`);
    expect(admin.status).toBe(401);
    expect(admin.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

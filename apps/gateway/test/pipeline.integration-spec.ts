import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { DEV_PRINCIPAL_MASTER_KEY, PRINCIPAL_TTL_MS, type PlanGates, PrincipalKeyring, decodePrincipal, devPrincipalKey, parsePlanGates } from '@meld/auth';
import { APP_NAMES, type AppName, PUBLIC_ROUTES, type PublicRoute } from '@meld/contracts';
import { requestIdOf } from '@meld/platform';
import { PROTOTYPE_NAMES, testEnv } from '@meld/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { TenancyStore } from '../src/public-api/access/tenancy-store';
import { TokenStore } from '../src/public-api/access/token-store';
import { PublicApi } from '../src/public-api/pipeline/public-api';
import { publicApiPlugin } from '../src/public-api/pipeline/public-api.plugin';
import { Upstreams } from '../src/public-api/proxy/upstreams';
import { DEFAULT_RATE_LIMITS } from '../src/public-api/rate-limit/limits';
import { localWindow } from '../src/public-api/rate-limit/local-window';
import { RateLimiter } from '../src/public-api/rate-limit/rate-limiter';
import { startStubUpstream } from './support/stub-upstream';
import { createTenancy, createToken, openTestDb } from './support/tenancy';

// The public pipeline on a bare Fastify instance: real Postgres (tokens, projects), real
// Redis (rate limits), a stub standing in for the internal apps, and the route table with
// the contact write replaced by a test copy with a tiny body limit, to exercise bodies.
const writeRoute: PublicRoute = {
  ...PUBLIC_ROUTES.find((r) => r.id === 'stream.read')!,
  id: 'test.stream.write',
  method: 'POST',
  path: '/v1/project/:project/datasource/:datasource/stream/contacts',
  scopes: ['PROJECT_INGEST_WRITE'],
  bodyLimit: 1024,
};

describe('public API pipeline', () => {
  let db: DataSource;
  let redis: Redis;
  let app: FastifyInstance;
  let base: string;
  let stub: Awaited<ReturnType<typeof startStubUpstream>>;
  let t: Awaited<ReturnType<typeof createTenancy>>;
  let reader: { id: string; token: string };
  let writer: { id: string; token: string };
  let dsToken: { id: string; token: string };

  const call = (path: string, init: RequestInit & { token?: string } = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.headers as Record<string, string>) } });
  const stream = () => `/v1/project/${t.project.uid}/datasource/${t.dataSource.id}/stream`;

  /** The pipeline on the suite's stores, every app answered by the stub; rate limits in a namespace of its own. */
  const pipelineApi = (planGates?: PlanGates) =>
    new PublicApi({
      tokens: new TokenStore(db, 5000, 2000, 'https://api.meld.test/v1', undefined, planGates),
      tenancy: new TenancyStore(db, 5000),
      limiter: new RateLimiter(redis, DEFAULT_RATE_LIMITS, `pipeline-spec-${randomUUID()}`),
      clients: localWindow(DEFAULT_RATE_LIMITS, 'client'),
      authFailures: localWindow(DEFAULT_RATE_LIMITS, 'authFailures'),
      upstreams: new Upstreams(Object.fromEntries(APP_NAMES.map((a) => [a, stub.url])) as Record<AppName, string>),
      db,
      principalKeys: new PrincipalKeyring(DEV_PRINCIPAL_MASTER_KEY),
      publicUrl: 'https://api.meld.test',
    });

  beforeAll(async () => {
    db = await openTestDb();
    redis = new Redis(testEnv().redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    stub = await startStubUpstream();
    t = await createTenancy(db);
    reader = await createToken(db, { organizationId: t.org.id, scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_INGEST_READ'], projects: [t.project.uid] });
    writer = await createToken(db, { organizationId: t.org.id, scopes: ['PROJECT_INGEST_WRITE'], projects: ['*'] });
    dsToken = await createToken(db, { organizationId: t.org.id, kind: 'datasource', dataSourceId: t.dataSource.id });
    const api = pipelineApi();
    app = Fastify({ genReqId: requestIdOf, trustProxy: true });
    app.get('/v1/openapi.json', async () => ({ openapi: '3.1.0' }));
    await app.register(publicApiPlugin(api, [...PUBLIC_ROUTES.filter((r) => !(r.method === writeRoute.method && r.path === writeRoute.path)), writeRoute]));
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await app?.close();
    await stub?.close();
    redis?.disconnect();
    await db?.destroy();
  });

  it('answers 404 for path parameters and paths named like Object.prototype members, never 500 (ADR 0124)', async () => {
    for (const name of PROTOTYPE_NAMES) {
      const seg = encodeURIComponent(name);
      const answers = [
        (await call(`/v1/project/${seg}`, { token: reader.token })).status,
        (await call(`/v1/${seg}`, { token: reader.token })).status,
        (await call(`/v1/project/${t.project.uid}/datasource/${seg}/stream`, { token: reader.token })).status,
        (await call(`/v1/project/${seg}/datasource/${t.dataSource.id}/stream`, { token: dsToken.token })).status,
      ];
      expect([name, answers]).toEqual([name, [404, 404, 404, 404]]);
      // header names too: forwarded as they came (Node's own header parsing drops a `__proto__` header before us)
      expect((await call(`/v1/project/${t.project.uid}`, { token: reader.token, headers: { [name]: 'v' } })).status).toBe(200);
      if (name !== '__proto__') expect(stub.last().headers[name.toLowerCase()]).toBe('v');
    }
  });

  it('answers 404 for a project path parameter holding U+0000 (%00), not a 503 from the failed lookup', async () => {
    for (const path of ['/v1/project/a%00b', `/v1/project/a%00b/datasource/${t.dataSource.id}/stream`]) {
      const res = await call(path, { token: reader.token });
      expect([path, res.status, ((await res.json()) as { message: string }).message]).toEqual([path, 404, 'project not found']);
    }
  });

  it('forwards to the owning app with a signed principal, the request id and no bearer', async () => {
    const res = await call(`/v1/project/${t.project.uid}?x=1`, { token: reader.token, headers: { 'x-request-id': 'req-pipeline-1', 'x-meld-principal': 'forged.value' } });
    expect(res.status).toBe(200);
    const seen = stub.last();
    expect(seen.url).toBe(`/v1/project/${t.project.uid}?x=1`);
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers['x-request-id']).toBe('req-pipeline-1');
    // Bound to the request the app received: this path and query, this method, this app, this request id.
    const received = { method: 'GET', url: seen.url, app: 'audience', requestId: 'req-pipeline-1' };
    const principal = decodePrincipal(seen.headers['x-meld-principal'] as string, received, devPrincipalKey('audience'));
    for (const other of [{ url: `/v1/project/${t.project.uid}` }, { method: 'DELETE' }, { requestId: 'req-other' }]) {
      expect(() => decodePrincipal(seen.headers['x-meld-principal'] as string, { ...received, ...other }, devPrincipalKey('audience'))).toThrow(/another request/);
    }
    // Signed with the audience's key (ADR 0256): no other app's key checks it.
    expect(() => decodePrincipal(seen.headers['x-meld-principal'] as string, { ...received, app: 'ingest' }, devPrincipalKey('ingest'))).toThrow(/signature/);
    expect(principal).toMatchObject({
      kind: 'product',
      tokenId: reader.id,
      organizationId: t.org.id,
      plan: 's',
      scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_INGEST_READ'],
      project: { id: t.project.id, uid: t.project.uid, dataMode: 'normal' },
      dataSourceId: null,
      requestId: 'req-pipeline-1',
    });
    expect(res.headers.get('x-ratelimit-limit')).toBe('120');
    expect(res.headers.get('x-request-id')).not.toBe('upstream-must-not-leak');
    expect(seen.headers['x-meld-ratelimit-limit']).toBeUndefined(); // ingest routes only
  });

  it('passes the rate-limit state to ingest and the verified data source in the principal', async () => {
    const res = await call(stream(), { token: dsToken.token });
    expect(res.status).toBe(200);
    const seen = stub.last();
    expect(seen.headers['x-meld-ratelimit-limit']).toBe('600');
    expect(seen.headers['x-meld-ratelimit-remaining']).toBe(res.headers.get('x-ratelimit-remaining'));
    expect(seen.headers['x-meld-ratelimit-reset']).toBe(res.headers.get('x-ratelimit-reset'));
    expect(seen.headers['x-meld-ratelimit-window']).toBe('60');
    const received = { method: 'GET', url: stream(), app: 'ingest', requestId: String(seen.headers['x-request-id']) };
    const principal = decodePrincipal(seen.headers['x-meld-principal'] as string, received, devPrincipalKey('ingest'));
    expect(principal).toMatchObject({ kind: 'datasource', dataSourceId: t.dataSource.id, scopes: ['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ'] });
  });

  it('streams a body through untouched, whatever its content type', async () => {
    const body = '[{"_user_id":"u1","_email":"a@b.c"}]';
    const res = await call(`${stream()}/contacts`, { method: 'POST', token: writer.token, body, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    expect(stub.last()).toMatchObject({ method: 'POST', body, headers: { 'content-type': 'application/json', 'content-length': String(body.length) } });
    const text = await call(`${stream()}/contacts`, { method: 'POST', token: writer.token, body: 'not json', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(200);
    expect(stub.last().body).toBe('not json');
  });

  it('counts and answers a body whose Content-Type is no media type like any other, and forwards it without that header', async () => {
    const body = '[{"_user_id":"u1"}]';
    const headers = { 'content-type': 'application/json, text/plain' };
    const anonymous = await call(`${stream()}/contacts`, { method: 'POST', body, headers });
    expect([anonymous.status, anonymous.headers.get('x-ratelimit-limit')]).toEqual([401, '60']);
    const res = await call(`${stream()}/contacts`, { method: 'POST', token: writer.token, body, headers });
    expect([res.status, res.headers.get('x-ratelimit-limit')]).toEqual([200, '600']);
    expect(stub.last().body).toBe(body);
    expect(stub.last().headers['content-type']).toBeUndefined();
  });

  it('signs the principal when the request leaves for the app, so a slow upload does not expire it (ADR 0102)', async () => {
    const body = '[{"_user_id":"slow"}]';
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${base}${stream()}/contacts`,
        { method: 'POST', headers: { authorization: `Bearer ${writer.token}`, 'content-type': 'application/json', 'content-length': String(body.length), 'x-request-id': 'req-slow-upload' } },
        (r) => {
          r.resume();
          r.on('end', () => resolve(r.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.flushHeaders();
      // The body arrives after a whole principal lifetime: the gateway collects it before forwarding (ADR 0290).
      setTimeout(() => req.end(body), PRINCIPAL_TTL_MS + 500);
    });
    expect(status).toBe(200);
    const seen = stub.last();
    expect(seen.body).toBe(body);
    const received = { method: 'POST', url: `${stream()}/contacts`, app: 'ingest', requestId: 'req-slow-upload' };
    // The app's own check, from when the request reached it.
    expect(decodePrincipal(seen.headers['x-meld-principal'] as string, received, devPrincipalKey('ingest'), seen.at)).toMatchObject({ requestId: 'req-slow-upload' });
  }, 20_000);

  it('refuses a body over the route limit with 413 in the error shape, by length or while streaming', async () => {
    const big = 'x'.repeat(2048);
    const res = await call(`${stream()}/contacts`, { method: 'POST', token: writer.token, body: big, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ statusCode: 413, error: 'Payload Too Large', message: 'request body larger than 1024 bytes' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('600');

    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${base}${stream()}/contacts`, { method: 'POST', headers: { authorization: `Bearer ${writer.token}`, 'content-type': 'application/json' } }, (r) => {
        let data = '';
        r.on('data', (c) => (data += c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body: data }));
      });
      req.on('error', reject);
      for (let i = 0; i < 8; i++) req.write('y'.repeat(256));
      req.end();
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ statusCode: 413 });
  });

  it('says why a bearer is refused (401), with rate-limit headers', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{}, 'missing Authorization header (expected "Bearer <token>")'],
      [{ authorization: 'Basic abc' }, 'malformed Authorization header (expected "Bearer <token>")'],
      [{ authorization: 'Bearer mld_pt_short' }, 'malformed token'],
      [{ authorization: `Bearer mld_pt_${'A'.repeat(43)}` }, 'unknown token'],
    ];
    for (const [headers, message] of cases) {
      const res = await call(`/v1/project/${t.project.uid}`, { headers: { ...headers, 'x-forwarded-for': '203.0.113.7' } });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message });
      // RFC 6750 §3.1: invalid_token once a credential was presented, the bare challenge otherwise.
      const error = headers.authorization ? `error="invalid_token", error_description="${message.replace(/"/g, "'")}", ` : '';
      expect(res.headers.get('www-authenticate')).toBe(`Bearer realm="meld", ${error}resource_metadata="https://api.meld.test/.well-known/oauth-protected-resource"`);
      expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    }
    const revoked = await createToken(db, { organizationId: t.org.id, scopes: [], projects: ['*'], revoked: true });
    const res = await call('/v1/', { token: revoked.token });
    expect(await res.json()).toMatchObject({ statusCode: 401, message: 'token revoked' });
  });

  it('uses neither of two Authorization headers (401): Node keeps the first, a proxy in front may have read the other', async () => {
    const twice = (first: string, second: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${base}/v1/project/${t.project.uid}`, { headers: ['host', '127.0.0.1', 'authorization', first, 'Authorization', second] }, (r) => {
          let body = '';
          r.on('data', (c: Buffer) => (body += c.toString()));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    const message = 'malformed Authorization header: sent more than once (send one "Bearer <token>")';
    for (const [first, second] of [
      [`Bearer ${reader.token}`, 'Bearer mld_pt_short'],
      ['Basic abc', `Bearer ${reader.token}`],
      [`Bearer ${reader.token}`, `Bearer ${reader.token}`],
    ]) {
      const answer = await twice(first!, second!);
      expect([answer.status, answer.body]).toEqual([401, JSON.stringify({ statusCode: 401, error: 'Unauthorized', message })]);
    }
  });

  it('drops a plan-gated scope the organization\'s plan does not unlock, from the principal and from GET /v1/ (ADR 0328)', async () => {
    const gated = pipelineApi(parsePlanGates('PROJECT_AUDIENCE_DATA_BASIC=m,PROJECT_AUDIENCE_LIST=m'));
    const gatedApp = Fastify({ genReqId: requestIdOf, trustProxy: true });
    await gatedApp.register(publicApiPlugin(gated, PUBLIC_ROUTES));
    const gatedBase = await gatedApp.listen({ port: 0, host: '127.0.0.1' });
    try {
      const scopesOf = async (plan: 's' | 'm') => {
        const tenancy = await createTenancy(db, { plan });
        const token = await createToken(db, { organizationId: tenancy.org.id, scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC'], projects: ['*'] });
        const auth = { authorization: `Bearer ${token.token}` };
        const me = (await (await fetch(`${gatedBase}/v1/`, { headers: auth })).json()) as { metadata: { scopes: string[]; dataPolicy: { mayReadPii: boolean } } };
        const url = `/v1/project/${tenancy.project.uid}`;
        expect((await fetch(`${gatedBase}${url}`, { headers: { ...auth, 'x-request-id': `req-gates-${plan}` } })).status).toBe(200);
        const received = { method: 'GET', url, app: 'audience', requestId: `req-gates-${plan}` };
        const principal = decodePrincipal(stub.last().headers['x-meld-principal'] as string, received, devPrincipalKey('audience'));
        return { listed: me.metadata.scopes, mayReadPii: me.metadata.dataPolicy.mayReadPii, forwarded: principal.scopes };
      };
      expect(await scopesOf('s')).toEqual({ listed: ['PROJECT_AUDIENCE_READ'], mayReadPii: false, forwarded: ['PROJECT_AUDIENCE_READ'] });
      const both = ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC'];
      expect(await scopesOf('m')).toEqual({ listed: both, mayReadPii: true, forwarded: both });
      // A route needing a gated scope the plan does not unlock: refused naming it, and saying it is the plan (not the grant) that lacks it.
      const small = await createTenancy(db, { plan: 's' });
      const lister = await createToken(db, { organizationId: small.org.id, scopes: ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_LIST'], projects: ['*'] });
      const refused = await fetch(`${gatedBase}/v1/project/${small.project.uid}/audience/scroll`, { method: 'POST', headers: { authorization: `Bearer ${lister.token}`, 'content-type': 'application/json' }, body: '{}' });
      expect([refused.status, await refused.json()]).toEqual([
        403,
        {
          statusCode: 403,
          error: 'Forbidden',
          message: "missing scope: PROJECT_AUDIENCE_LIST (PROJECT_AUDIENCE_LIST is granted to this token but not included in the organization's plan s)",
          details: { missingScopes: ['PROJECT_AUDIENCE_LIST'], planGatedScopes: ['PROJECT_AUDIENCE_LIST'] },
        },
      ]);
    } finally {
      await gatedApp.close();
    }
  });

  it('refuses an expired OAuth access token (401), whether looked up now or already in memory', async () => {
    const oauth = async (expiresInMs: number) => {
      const token = await createToken(db, { organizationId: t.org.id, kind: 'oauth', scopes: [], projects: ['*'] });
      await db.query(`UPDATE tokens SET expires_at = now() + make_interval(secs => $2::float8 / 1000) WHERE id = $1`, [token.id, expiresInMs]);
      return token;
    };
    const expired = await call('/v1/', { token: (await oauth(-60_000)).token });
    expect(expired.status).toBe(401);
    expect(await expired.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'token expired' });
    expect(expired.headers.get('www-authenticate')).toContain('resource_metadata=');
    const soon = await oauth(1_500);
    expect((await call('/v1/', { token: soon.token })).status).toBe(200); // in memory from here on
    await new Promise((r) => setTimeout(r, 1_700));
    expect(await (await call('/v1/', { token: soon.token })).json()).toMatchObject({ statusCode: 401, message: 'token expired' });
  });

  it('refuses an OAuth token bound (RFC 8707) to another resource than this API', async () => {
    const bind = async (resource: string | null) => {
      const token = await createToken(db, { organizationId: t.org.id, kind: 'oauth', scopes: [], projects: ['*'] });
      await db.query(`UPDATE tokens SET resource = $2 WHERE id = $1`, [token.id, resource]);
      return (await call('/v1/', { token: token.token })).json();
    };
    expect(await bind('https://other.example/v1')).toMatchObject({ statusCode: 401, message: 'token issued for another resource (RFC 8707)' });
    expect(await bind('https://api.meld.test/v1')).toMatchObject({ entity: { kind: 'oauth' } });
    expect(await bind(null)).toMatchObject({ entity: { kind: 'oauth' } });
  });

  it('answers unknown /v1 paths 404 in the error shape but leaves the routes the gateway serves itself alone', async () => {
    const res = await call('/v1/nope/deeper', { token: reader.token });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'no such endpoint: GET /v1/nope/deeper' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    expect((await call('/v1', { method: 'DELETE' })).status).toBe(404);
    expect((await call('/v1/project/x', { method: 'POST' })).status).toBe(404);
    expect(await (await call('/v1/openapi.json')).json()).toEqual({ openapi: '3.1.0' });
  });

  it('hides projects and data sources a token cannot reach (404) and names missing scopes (404 on the ingest API, 403 elsewhere)', async () => {
    const otherProject = await createTenancy(db);
    const hidden = await call(`/v1/project/${otherProject.project.uid}`, { token: reader.token });
    expect(hidden.status).toBe(404);
    expect(await hidden.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'project not found' });
    expect((await call('/v1/project/does-not-exist', { token: reader.token })).status).toBe(404);
    const foreignDs = await call(`/v1/project/${t.project.uid}/datasource/${otherProject.dataSource.id}/stream`, { token: reader.token });
    expect(await foreignDs.json()).toMatchObject({ statusCode: 404, message: 'data source not found' });
    expect((await call(`/v1/project/${t.project.uid}/datasource/not-a-uuid/stream`, { token: reader.token })).status).toBe(404);
    const noScope = await call(stream(), { token: writer.token });
    // The ingest API answers a token not allowed on the data source 404, naming why (its error table has no 403; ADR 0009).
    expect(noScope.status).toBe(404);
    expect(await noScope.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'missing scope: PROJECT_INGEST_READ', details: { missingScopes: ['PROJECT_INGEST_READ'] } });
    const dsOnProduct = await call(`/v1/project/${t.project.uid}`, { token: dsToken.token });
    expect(dsOnProduct.status).toBe(403);
    expect(((await dsOnProduct.json()) as { message: string }).message).toMatch(/data-source tokens may only call the stream endpoints/);
    expect(dsOnProduct.headers.get('www-authenticate')).toBeNull();
    const short = await call(`/v1/project/${t.project.uid}/segment`, { token: writer.token });
    expect([short.status, ((await short.json()) as { message: string }).message]).toEqual([403, 'missing scope: PROJECT_AUDIENCE_READ']);
    expect(short.headers.get('www-authenticate')).toBe('Bearer realm="meld", error="insufficient_scope", scope="PROJECT_AUDIENCE_READ"');
  });

  it('answers 502 in the error shape when the owning app is down', async () => {
    await stub.close();
    const res = await call(`/v1/project/${t.project.uid}`, { token: reader.token });
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ statusCode: 502, error: 'Bad Gateway', message: 'the audience service is unavailable' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('120');
  });
});

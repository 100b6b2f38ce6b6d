import { APP_NAMES, appUrlEnv } from '@meld/contracts';
import { testEnv, waitFor } from '@meld/testing';
import { startGateway } from './support/gateway';
import { startStubUpstream } from './support/stub-upstream';
import { awayFromWindowEdge } from './support/window-edge';

// The gateway app in process, the oauth app (and every other) replaced by a stub: what the
// OAuth door forwards, what it adds and drops, and how it counts (ADR 0145). The gateway
// believes X-Forwarded-For from loopback here (MELD_TRUST_PROXY), so each test is its own
// client IP and its own rate-limit bucket.
describe('gateway: the OAuth door', () => {
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let stub: Awaited<ReturnType<typeof startStubUpstream>>;

  beforeAll(async () => {
    stub = await startStubUpstream((req) =>
      req.url.startsWith('/oauth/authorize') ? { status: 302, body: {}, headers: { location: `/oauth/consent?${req.url.split('?')[1]}` } } : { status: 200, body: { path: req.url } },
    );
    const env = testEnv();
    gateway = await startGateway(
      {
        MELD_POSTGRES_URL: env.postgresUrl,
        MELD_REDIS_URL: env.redisUrl,
        MELD_ALLOW_DEV_SECRETS: '1',
        MELD_PUBLIC_URL: 'https://api.meld.test/',
        MELD_RATE_LIMIT_NAMESPACE: `oauth-door-spec-${process.pid}-${Date.now()}`,
        MELD_RATE_LIMITS: JSON.stringify({ oauth: { limit: 5 } }),
        ...Object.fromEntries(APP_NAMES.filter((a) => a !== 'gateway').map((a) => [appUrlEnv(a), stub.url])),
      },
      { trustProxy: '127.0.0.1' },
    );
    await waitFor('gateway connected to postgres', async () => (await fetch(`${gateway.url}/readyz`)).status === 200);
  }, 30000);

  afterAll(async () => {
    await gateway?.close();
    await stub?.close();
  });

  const from = (ip: string, headers: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...headers });

  it('forwards the discovery documents anonymously, with rate-limit headers and no principal', async () => {
    // The protected-resource document at the root and at RFC 9728's path form for the resource `/v1` (MCP clients try that first).
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/v1']) {
      const res = await fetch(`${gateway.url}${path}`, { headers: from('192.0.2.1') });
      expect([path, res.status, await res.json()]).toEqual([path, 200, { path }]);
      expect(res.headers.get('x-ratelimit-limit')).toBe('5');
      expect(stub.last().headers['x-meld-principal']).toBeUndefined();
    }
  });

  it('passes /oauth/authorize through with the query string byte for byte and the 302 back unchanged', async () => {
    const query = 'response_type=code&client_id=c1&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&scope=A%20B&state=%2B%2F%3D&x=&x=2';
    const res = await fetch(`${gateway.url}/oauth/authorize?${query}`, { redirect: 'manual', headers: from('192.0.2.2') });
    expect(stub.last().url).toBe(`/oauth/authorize?${query}`);
    expect([res.status, res.headers.get('location')]).toEqual([302, `/oauth/consent?${query}`]);
  });

  it('streams form bodies and keeps the client Authorization (confidential clients), sending only the resolved client IP', async () => {
    const body = 'grant_type=authorization_code&code=abc&code_verifier=v';
    const res = await fetch(`${gateway.url}/oauth/token`, {
      method: 'POST',
      // A forged left part: the gateway trusts loopback only, so the client is 198.51.100.7.
      headers: from('203.0.113.66, 198.51.100.7', { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic Y2xpZW50OnNlY3JldA==', 'x-meld-principal': 'forged' }),
      body,
    });
    expect(res.status).toBe(200);
    const seen = stub.last();
    expect([seen.method, seen.url, seen.body]).toEqual(['POST', '/oauth/token', body]);
    expect(seen.headers.authorization).toBe('Basic Y2xpZW50OnNlY3JldA==');
    expect(seen.headers['x-meld-principal']).toBeUndefined();
    expect(seen.headers['x-forwarded-for']).toBe('198.51.100.7');
    expect(seen.headers['x-request-id']).toBe(res.headers.get('x-request-id'));
  });

  it('forwards a body whose Content-Type is no media type without that header, counted, with rate-limit headers', async () => {
    const body = 'grant_type=authorization_code&code=abc';
    const res = await fetch(`${gateway.url}/oauth/token`, { method: 'POST', headers: from('192.0.2.9', { 'content-type': 'application/x-www-form-urlencoded, text/plain' }), body });
    expect([res.status, res.headers.get('x-ratelimit-limit')]).toEqual([200, '5']);
    expect([stub.last().body, stub.last().headers['content-type']]).toEqual([body, undefined]);
  });

  it('counts per client IP: the sixth call in the window is 429, another IP still passes', async () => {
    await awayFromWindowEdge(60_000, 5_000);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await fetch(`${gateway.url}/oauth/register`, { method: 'POST', headers: from('192.0.2.50'), body: '{}' })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect((await fetch(`${gateway.url}/oauth/register`, { method: 'POST', headers: from('192.0.2.51'), body: '{}' })).status).toBe(200);
  });

  it('refuses a body above 64 KiB with 413', async () => {
    const res = await fetch(`${gateway.url}/oauth/register`, { method: 'POST', headers: from('192.0.2.60', { 'content-type': 'application/json' }), body: 'x'.repeat(65 * 1024) });
    expect(res.status).toBe(413);
  });

  it('a 401 on /v1 points at the protected-resource metadata (RFC 9728, MCP discovery)', async () => {
    const res = await fetch(`${gateway.url}/v1/`, { headers: from('192.0.2.70') });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="meld", resource_metadata="https://api.meld.test/.well-known/oauth-protected-resource"');
  });
});

import { networkInterfaces } from 'node:os';
import { scanAppDocument } from '@meld/api';
import { HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import { type AdminGateway, startAdminGateway } from './admin-support/admin-gateway';
import { awayFromWindowEdge } from './support/window-edge';

// Every admin route, read from the admin module's own OpenAPI scan so a new route cannot
// be forgotten here: without the admin token, or with a wrong one, each answers 401.
describe('admin API authentication', () => {
  let gw: AdminGateway;
  let routes: { method: string; path: string }[];

  beforeAll(async () => {
    // One wrong token per route: more than the default budget of wrong tokens per client (tested below).
    gw = await startAdminGateway({ rateLimits: { adminFailures: { limit: 1000 } } });
    const doc = scanAppDocument(gw.app.get(ModulesContainer), gw.app.get(HttpAdapterHost), 'admin');
    routes = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000') })),
    );
  });
  afterAll(() => gw?.close());

  it('covers the whole admin table of the design', () => {
    const listed = routes.map((r) => `${r.method} ${r.path.replace(/00000000-0000-4000-8000-000000000000/g, '{}')}`);
    for (const expected of [
      'POST /admin/v1/organizations',
      'POST /admin/v1/organizations/{}/projects',
      'PATCH /admin/v1/projects/{}',
      'POST /admin/v1/projects/{}/datasources',
      'POST /admin/v1/organizations/{}/tokens',
      'DELETE /admin/v1/tokens/{}',
      'POST /admin/v1/projects/{}/event-types',
      'POST /admin/v1/projects/{}/attributes',
      'POST /admin/v1/projects/{}/senders',
      'PATCH /admin/v1/projects/{}/senders/{}',
      'PUT /admin/v1/projects/{}/legal-profile',
      'PUT /admin/v1/organizations/{}/webhooks/sms-status',
      'POST /admin/v1/organizations/{}/users',
      'GET /admin/v1/organizations/{}',
      'GET /admin/v1/organizations/{}/projects',
      'GET /admin/v1/projects/{}',
    ]) {
      expect(listed).toContain(expected);
    }
  });

  it('answers 401 without a token and with a wrong one, on every admin route', async () => {
    for (const { method, path } of routes) {
      const sub = path.replace(/^\/admin\/v1/, '');
      const missing = await gw.call(method, sub, method === 'GET' || method === 'DELETE' ? undefined : {}, null);
      expect([`${method} ${path}`, missing.status]).toEqual([`${method} ${path}`, 401]);
      expect(missing.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.stringContaining('missing admin token') });
      expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="meld-admin"');
      const wrong = await gw.call(method, sub, method === 'GET' || method === 'DELETE' ? undefined : {}, 'meld-test-admin-but-wrong');
      expect([`${method} ${path}`, wrong.status, wrong.body.message]).toEqual([`${method} ${path}`, 401, 'invalid admin token']);
    }
  });

  it('lists the known scopes for tools', async () => {
    const res = await gw.call('GET', '/scopes');
    expect(res.status).toBe(200);
    expect(res.body.entity).toEqual(expect.arrayContaining(['ACCOUNT_READ', 'PROJECT_DIRECT_WRITE', 'PROJECT_INGEST_WRITE']));
    expect(res.body.metadata.ingest).toEqual(['PROJECT_INGEST_WRITE', 'PROJECT_INGEST_READ']);
  });
});

describe('admin API rate limits (ADR 0123)', () => {
  let gw: AdminGateway;
  const FAILURES = 3;
  const REQUESTS = 12;

  beforeAll(async () => {
    gw = await startAdminGateway({ rateLimits: { adminFailures: { limit: FAILURES }, admin: { limit: REQUESTS } } });
  });
  afterAll(() => gw?.close());

  it('refuses a client that sent too many wrong admin tokens, even with the right one, with 429 and Retry-After', async () => {
    const wrong = [];
    await awayFromWindowEdge(60_000);
    for (let i = 0; i < FAILURES; i++) wrong.push((await gw.call('GET', '/scopes', undefined, `wrong-admin-token-${i}`)).status);
    expect(wrong).toEqual(Array(FAILURES).fill(401));
    const locked = await gw.call('GET', '/scopes');
    expect({ status: locked.status, message: locked.body.message }).toEqual({ status: 429, message: 'too many wrong admin tokens from this client; retry later' });
    expect(locked.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('limits every admin request per client', async () => {
    const statuses = [];
    await awayFromWindowEdge(60_000);
    for (let i = 0; i < REQUESTS + 2; i++) statuses.push((await gw.call('GET', '/scopes', undefined, null)).status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
    const refused = await gw.call('GET', '/scopes', undefined, null);
    expect({ status: refused.status, message: refused.body.message }).toEqual({ status: 429, message: 'too many admin requests from this client; retry later' });
  });
});

describe('the default admin token', () => {
  let gw: AdminGateway;
  const external = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

  beforeAll(async () => {
    gw = await startAdminGateway({ adminToken: null, host: '0.0.0.0' });
  });
  afterAll(() => gw?.close());

  it('works from loopback when MELD_ADMIN_TOKEN is not set', async () => {
    expect((await gw.call('GET', '/scopes', undefined, 'meld-dev-admin')).status).toBe(200);
    expect((await gw.call('GET', '/scopes', undefined, 'meld-test-admin')).status).toBe(401);
  });

  (external ? it : it.skip)('is refused from any other address, even with a spoofed X-Forwarded-For', async () => {
    const port = new URL(gw.base).port;
    const res = await fetch(`http://${external}:${port}/admin/v1/scopes`, { headers: { authorization: 'Bearer meld-dev-admin', 'x-forwarded-for': '127.0.0.1' } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toMatch(/loopback only/);
  });
});

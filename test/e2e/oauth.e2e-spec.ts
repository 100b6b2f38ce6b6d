import { randomUUID } from 'node:crypto';
import { answerConsent, authorizeQuery, oauthTokens, pkcePair, registerOAuthClient, tokenRequest } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import { adminApi } from './support/admin-api';
import { SHARED_BASE, SHARED_GATEWAY_CACHE_TTL_MS, sharedSystem } from './support/shared-system';

// The OAuth flow through the gateway, the eight apps running as processes (the shared e2e
// system, ADR 0352): discovery from a 401, registration, authorize (302, query unchanged), the
// consent screen with a user made through the admin API, the code exchange, the token on
// /v1 limited to its grant, refresh rotation, and revocation reaching the gateway (ADR 0145).
const BASE = SHARED_BASE;
const CACHE_TTL_MS = SHARED_GATEWAY_CACHE_TTL_MS;
const REDIRECT = 'http://127.0.0.1:9/callback';
const PASSWORD = 'correct horse battery staple';

const admin = adminApi(BASE);

const v1 = (path: string, token: string) => fetch(`${BASE}/v1${path}`, { headers: { authorization: `Bearer ${token}` } });

describe('OAuth 2.1 through the gateway', () => {
  const user = { email: `oauth-${randomUUID().slice(0, 8)}@example.test`, password: PASSWORD };
  let org: string;
  let granted: string;
  let outside: string;

  beforeAll(async () => {
    await sharedSystem();
    org = (await admin('POST', '/organizations', { name: `oauth-${randomUUID().slice(0, 8)}`, plan: 's' })).entity.id;
    granted = (await admin('POST', `/organizations/${org}/projects`, { name: 'Granted' })).entity.uid!;
    outside = (await admin('POST', `/organizations/${org}/projects`, { name: 'Not granted' })).entity.uid!;
    await admin('POST', `/organizations/${org}/users`, user);
  }, 180000);

  it('a 401 on /v1 leads to the protected-resource and authorization-server metadata', async () => {
    const res = await fetch(`${BASE}/v1/`);
    expect(res.status).toBe(401);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(res.headers.get('www-authenticate') ?? '')?.[1];
    expect(metadataUrl).toBe(`${BASE}/.well-known/oauth-protected-resource`);
    const resource = (await (await fetch(metadataUrl!)).json()) as { resource: string; authorization_servers: string[] };
    expect(resource.resource).toBe(`${BASE}/v1`);
    const server = (await (await fetch(`${resource.authorization_servers[0]}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(server).toMatchObject({ issuer: BASE, token_endpoint: `${BASE}/oauth/token`, registration_endpoint: `${BASE}/oauth/register`, code_challenge_methods_supported: ['S256'] });
  });

  it('register → authorize (302, query unchanged) → consent → code → token → /v1 within the grant → refresh → revoke', async () => {
    const client = await registerOAuthClient(BASE, REDIRECT, { client_name: 'E2E assistant' });
    const { verifier, challenge } = pkcePair();
    const query = authorizeQuery(client.client_id, REDIRECT, challenge, { scope: 'PROJECT_AUDIENCE_READ', state: 'xyz/+=' });
    const authorize = await fetch(`${BASE}/oauth/authorize?${query}`, { redirect: 'manual' });
    expect([authorize.status, authorize.headers.get('location')]).toEqual([302, `/oauth/consent?${query}`]);

    const back = await answerConsent(BASE, query, user, { decision: 'approve', projects: [granted] });
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect([back.searchParams.get('state'), back.searchParams.get('iss')]).toEqual(['xyz/+=', BASE]);
    const exchanged = await tokenRequest(BASE, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, code_verifier: verifier, client_id: client.client_id, redirect_uri: REDIRECT });
    expect(exchanged).toMatchObject({ status: 200, body: { token_type: 'Bearer', scope: 'PROJECT_AUDIENCE_READ' } });
    expect(exchanged.body.expires_in).toBeGreaterThanOrEqual(3599); // 1 h, counted down by the library
    const access = exchanged.body.access_token!;

    const me = await v1('/', access);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ entity: { kind: 'oauth', projects: [{ uid: granted }] }, metadata: { scopes: ['PROJECT_AUDIENCE_READ'] } });
    expect((await v1(`/project/${granted}`, access)).status).toBe(200);
    expect((await v1(`/project/${outside}`, access)).status).toBe(404);

    const refreshed = await tokenRequest(BASE, { grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token!, client_id: client.client_id });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(exchanged.body.refresh_token);
    const next = refreshed.body.access_token!;
    expect((await v1('/', next)).status).toBe(200); // cached by the gateway before the revocation

    const revoked = await fetch(`${BASE}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: next, client_id: client.client_id }).toString() });
    expect(revoked.status).toBe(200);
    const started = Date.now();
    await waitFor('the gateway refuses the revoked token', async () => (await v1('/', next)).status === 401, { timeoutMs: CACHE_TTL_MS + 2000 });
    expect(Date.now() - started).toBeLessThan(CACHE_TTL_MS + 1000);
  });

  it('a rotated refresh token presented again ends the grant at the gateway', async () => {
    const first = await oauthTokens(BASE, user, { scope: 'PROJECT_AUDIENCE_READ', projects: [granted] });
    const rotated = await tokenRequest(BASE, { grant_type: 'refresh_token', refresh_token: first.refreshToken, client_id: first.client.client_id });
    expect(rotated.status).toBe(200);
    const reuse = await tokenRequest(BASE, { grant_type: 'refresh_token', refresh_token: first.refreshToken, client_id: first.client.client_id });
    expect([reuse.status, reuse.body.error]).toEqual([400, 'invalid_grant']);
    await waitFor("the grant's tokens are refused", async () => (await v1('/', rotated.body.access_token!)).status === 401, { timeoutMs: CACHE_TTL_MS + 2000 });
  });

  it('the operator lists the grant and revokes it, then deletes the user: each ends the tokens at the gateway at once', async () => {
    const leaving = { email: `leaving-${randomUUID().slice(0, 8)}@example.test`, password: PASSWORD };
    const userId = (await admin('POST', `/organizations/${org}/users`, leaving)).entity.id;
    const first = await oauthTokens(BASE, leaving, { scope: 'PROJECT_AUDIENCE_READ', projects: [granted] });
    expect((await v1('/', first.accessToken)).status).toBe(200); // now cached by the gateway
    const grants = (await admin('GET', `/organizations/${org}/oauth-grants`)) as unknown as { entity: Array<{ id: string; clientId: string; userId: string; userEmail: string }> };
    const grant = grants.entity.find((g) => g.clientId === first.client.client_id)!;
    expect([grant.userEmail, grant.userId]).toEqual([leaving.email, userId]);
    await admin('DELETE', `/oauth-grants/${grant.id}`);
    expect((await v1('/', first.accessToken)).status).toBe(401);

    const second = await oauthTokens(BASE, leaving, { projects: [granted] });
    expect((await v1('/', second.accessToken)).status).toBe(200);
    await admin('DELETE', `/users/${userId}`);
    expect((await v1('/', second.accessToken)).status).toBe(401);
  });

  it('the public OpenAPI document describes the OAuth endpoints (anonymous) and the OAuth 2 security scheme', async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const doc = (await (await fetch(`${BASE}/v1/openapi.json`)).json()) as any;
    expect(doc['x-meld-incomplete']).toBeUndefined();
    for (const [path, method] of [
      ['/.well-known/oauth-authorization-server', 'get'],
      ['/.well-known/oauth-protected-resource', 'get'],
      ['/oauth/register', 'post'],
      ['/oauth/authorize', 'get'],
      ['/oauth/token', 'post'],
      ['/oauth/revoke', 'post'],
    ]) {
      expect([path, method, doc.paths[path]?.[method]?.summary]).toEqual([path, method, expect.any(String)]);
      expect(doc.paths[path][method].security).toEqual([]);
    }
    expect(doc.components.securitySchemes.oauth2.flows.authorizationCode).toMatchObject({ authorizationUrl: '/oauth/authorize', tokenUrl: '/oauth/token' });
  });

  it('Deny sends the user back with access_denied and no code', async () => {
    const client = await registerOAuthClient(BASE, REDIRECT);
    const query = authorizeQuery(client.client_id, REDIRECT, pkcePair().challenge, { state: 's2' });
    const back = await answerConsent(BASE, query, user, { decision: 'deny' });
    expect([back.searchParams.get('error'), back.searchParams.get('code'), back.searchParams.get('state')]).toEqual(['access_denied', null, 's2']);
  });
});

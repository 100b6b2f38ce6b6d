import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ClientDirectory } from '../src/client-metadata/client-directory';
import { loadOAuthConfig } from '../src/oauth-config';
import { OAuthRepository } from '../src/storage/oauth.repository';
import { approvedCode, form, pkcePair, seedUser, startOAuth } from './app.fixture';

// Client ID Metadata Documents (ADR 0149): the client_id is the URL of the client's metadata,
// served here by a local http server (MELD_OAUTH_ALLOW_PRIVATE_FETCH=1, set by the test setup).
const REDIRECT = 'http://127.0.0.1:9/callback';

describe('oauth: Client ID Metadata Documents (real Postgres, a local document server)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let docs: Server;
  let origin: string;
  const hits = new Map<string, number>();
  const documents = new Map<string, (url: string) => unknown>([
    ['/good.json', (url) => ({ client_id: url, client_name: 'Doc Assistant', redirect_uris: [REDIRECT] })],
    ['/other-id.json', () => ({ client_id: 'https://elsewhere.example/app.json', redirect_uris: [REDIRECT] })],
    ['/secret.json', (url) => ({ client_id: url, redirect_uris: [REDIRECT], client_secret: 'shh' })],
    ['/bad-redirect.json', (url) => ({ client_id: url, redirect_uris: ['http://app.example/cb'] })],
    ['/no-redirects.json', (url) => ({ client_id: url, redirect_uris: [] })],
    ['/big.json', (url) => ({ client_id: url, redirect_uris: [REDIRECT], client_name: 'x', padding: 'y'.repeat(6000) })],
    ['/code-only.json', (url) => ({ client_id: url, redirect_uris: [REDIRECT], grant_types: ['authorization_code'] })],
    ['/refresh-only.json', (url) => ({ client_id: url, redirect_uris: [REDIRECT], grant_types: ['refresh_token'] })],
    ['/control-name.json', (url) => ({ client_id: url, redirect_uris: [REDIRECT], client_name: 'Doc\u0000Assistant' })],
    ['/control-redirect.json', (url) => ({ client_id: url, redirect_uris: [`${REDIRECT}\u0000`] })],
    ['/bidi-name.json', (url) => ({ client_id: url, redirect_uris: [REDIRECT], client_name: 'Doc\u202EtnatsissA' })],
    ['/script-uri.json', (url) => ({ client_id: url, redirect_uris: [REDIRECT], client_uri: 'javascript:alert(document.cookie)' })],
  ]);

  beforeAll(async () => {
    docs = createServer((req, res) => {
      const path = req.url ?? '/';
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const doc = documents.get(path);
      if (!doc) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc(`${origin}${path}`)));
    });
    await new Promise<void>((resolve) => docs.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(docs.address() as AddressInfo).port}`;
    ({ app, base, db } = await startOAuth());
  });
  afterAll(async () => {
    await app?.close();
    docs.closeAllConnections();
    docs.close();
  });

  const authorize = (clientId: string, redirectUri = REDIRECT) => {
    const q = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 's' });
    return fetch(`${base}/oauth/authorize?${q}`, { redirect: 'manual' });
  };

  it('the metadata says documents are supported', async () => {
    const as = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(as.client_id_metadata_document_supported).toBe(true);
  });

  it('a document URL as client_id: fetched once (cached), its redirect_uris matched exactly, the code exchanged by that client', async () => {
    const clientId = `${origin}/good.json`;
    const ok = await authorize(clientId);
    expect([ok.status, ok.headers.get('location')]).toEqual([302, expect.stringMatching(/^\/oauth\/consent\?/)]);
    const prefix = await authorize(clientId, `${REDIRECT}/more`);
    expect(prefix.status).toBe(400);
    expect(await prefix.text()).toContain('redirect_uri is not one this application registered');
    expect(hits.get('/good.json')).toBe(1);

    const [row] = await db.query(`SELECT name, redirect_uris, token_endpoint_auth_method, secret_hash FROM oauth_clients WHERE id = $1`, [clientId]);
    expect(row).toEqual({ name: 'Doc Assistant', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', secret_hash: null });
    const t = await seedUser(db);
    const { verifier, challenge } = pkcePair();
    const { code } = await approvedCode(db, t, clientId, REDIRECT, challenge);
    const token = await form(base, '/oauth/token', { grant_type: 'authorization_code', client_id: clientId, redirect_uri: REDIRECT, code, code_verifier: verifier });
    expect([token.status, token.body.token_type]).toEqual([200, 'Bearer']);
  });

  it("a document's grant_types hold (RFC 7591 §2), as a registration's do: without refresh_token, no refresh token is issued", async () => {
    const clientId = `${origin}/code-only.json`;
    expect((await authorize(clientId)).status).toBe(302);
    const t = await seedUser(db);
    const { verifier, challenge } = pkcePair();
    const { code } = await approvedCode(db, t, clientId, REDIRECT, challenge);
    const token = await form(base, '/oauth/token', { grant_type: 'authorization_code', client_id: clientId, redirect_uri: REDIRECT, code, code_verifier: verifier });
    expect([token.status, token.body.access_token, token.body.refresh_token]).toEqual([200, expect.stringMatching(/^mld_oa_/), undefined]);
  });

  it.each([
    ['/other-id.json', 'client_id must be the URL of the document itself'],
    ['/secret.json', 'client_secret must not be present'],
    ['/bad-redirect.json', 'redirect_uris[0] must use https'],
    ['/no-redirects.json', 'redirect_uris at least one redirect URI is required'],
    ['/big.json', 'answer larger than 5120 bytes'],
    ['/refresh-only.json', 'grant_types must include authorization_code'],
    ['/control-name.json', 'client_name must not contain the NUL character'],
    ['/control-redirect.json', 'redirect_uris[0] must not contain the NUL character'],
    ['/bidi-name.json', 'client_name must not contain control, line-breaking or bidirectional formatting characters (U+202E)'],
    ['/script-uri.json', 'client_uri must be an http or https URL'],
    ['/missing.json', 'answered HTTP 404'],
    ['/', 'must have a path'],
  ])('an unusable document %s is an error page naming why, never a redirect', async (path, reason) => {
    const res = await authorize(`${origin}${path}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toContain(reason);
  });

  it('without the local-stack flag: http and private targets are refused before any connection', async () => {
    const directory = new ClientDirectory(new OAuthRepository(db), loadOAuthConfig({ ...process.env, MELD_OAUTH_ALLOW_PRIVATE_FETCH: '0' }));
    const before = hits.get('/good.json');
    expect(await directory.lookup(`${origin}/good.json`)).toEqual({ problem: expect.stringContaining('must use https') });
    expect(await directory.lookup(`https://127.0.0.1:${new URL(origin).port}/good.json`)).toEqual({ problem: expect.stringContaining('targets a private, loopback or link-local address') });
    expect(await directory.lookup('https://localhost/app.json')).toEqual({ problem: expect.stringContaining('localhost resolves to a private') });
    expect(hits.get('/good.json')).toBe(before);
  });
});

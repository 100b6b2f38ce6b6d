import { hashToken } from '@meld/auth';
import { type INestApplication, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { OAuthRepository } from '../src/storage/oauth.repository';
import { approvedCode, errorLinkAfterSignIn, form, pkcePair, register, seedUser, startOAuth } from './app.fixture';

const REDIRECT = 'http://127.0.0.1:9/callback';

describe('oauth protocol: discovery, registration, authorize, token, revoke (real Postgres)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;

  beforeAll(async () => {
    ({ app, base, db } = await startOAuth());
  });
  afterAll(() => app?.close());

  const client = async (extra: Record<string, unknown> = {}) => (await register(base, { client_name: 'Test app', redirect_uris: [REDIRECT], ...extra })).body;
  const exchange = (fields: Record<string, string>) => form(base, '/oauth/token', { grant_type: 'authorization_code', redirect_uri: REDIRECT, ...fields });
  const tokenRows = (grantId: string) => db.query(`SELECT kind, scopes, projects, user_id, revoked_at, expires_at FROM tokens WHERE oauth_grant_id = $1`, [grantId]);
  const grantRevoked = async (grantId: string) => (await db.query(`SELECT revoked_at FROM oauth_grants WHERE id = $1`, [grantId]))[0].revoked_at !== null;

  async function issued() {
    const t = await seedUser(db);
    const c = await client();
    const { verifier, challenge } = pkcePair();
    const { code, grantId } = await approvedCode(db, t, c.client_id, REDIRECT, challenge);
    const res = await exchange({ client_id: c.client_id, code, code_verifier: verifier });
    expect(res.status).toBe(200);
    return { t, c, code, verifier, grantId, tokens: res.body };
  }

  it('metadata: RFC 8414 with S256 only, RFC 9728 naming the server', async () => {
    const as = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json();
    expect(as).toMatchObject({ issuer: 'http://127.0.0.1:8080', token_endpoint: 'http://127.0.0.1:8080/oauth/token', code_challenge_methods_supported: ['S256'], grant_types_supported: ['authorization_code', 'refresh_token'] });
    const pr = await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json();
    expect(pr).toMatchObject({ resource: 'http://127.0.0.1:8080/v1', authorization_servers: ['http://127.0.0.1:8080'] });
    // RFC 9728 §3.1: the metadata of resource `<public url>/v1` is at `/.well-known/oauth-protected-resource/v1`, the same document.
    const atPath = await fetch(`${base}/.well-known/oauth-protected-resource/v1`);
    expect([atPath.status, atPath.headers.get('cache-control'), await atPath.json()]).toEqual([200, 'public, max-age=3600', pr]);
  });

  it('registration: https or loopback http only, errors as OAuth bodies naming the field', async () => {
    const ok = await register(base, { client_name: 'A', redirect_uris: ['https://app.example/cb', 'http://localhost:3000/cb', 'http://[::1]/cb'] });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ client_id: expect.stringMatching(/^mcl_/), token_endpoint_auth_method: 'none' });
    expect(ok.body.client_secret).toBeUndefined();
    for (const uri of ['http://app.example/cb', 'javascript:alert(1)', 'https://app.example/cb#frag', 'not a url', 'https://user:pw@app.example/cb']) {
      const bad = await register(base, { redirect_uris: [uri] });
      expect([uri, bad.status, bad.body.error]).toEqual([uri, 400, 'invalid_redirect_uri']);
      expect(bad.body.error_description).toContain('redirect_uris[0]');
    }
    // Text Postgres cannot store (U+0000, a lone surrogate): the OAuth error naming the field (RFC 7591 §3.2.2), not a 400 of another shape.
    for (const [body, error, field] of [
      [{ client_name: 'A\u0000B', redirect_uris: [REDIRECT] }, 'invalid_client_metadata', 'client_name'],
      [{ client_name: 'A\ud800B', redirect_uris: [REDIRECT] }, 'invalid_client_metadata', 'client_name'],
      [{ redirect_uris: [REDIRECT], client_uri: 'https://app.example/\u0000' }, 'invalid_client_metadata', 'client_uri'],
      [{ redirect_uris: [REDIRECT, 'https://app.example/cb\u0000'] }, 'invalid_redirect_uri', 'redirect_uris[1]'],
    ] as const) {
      const bad = await register(base, body);
      expect([field, bad.status, bad.body.error, bad.body.error_description]).toEqual([field, 400, error, expect.stringContaining(`${field}`)]);
    }
    // The name the consent screen shows cannot reorder or hide text around it (a bidi override, an isolate, a line break).
    for (const name of ['Acme\u202E', 'Acme \u2067Ltd', 'Acme\u200F', 'Acme\u061C', 'Acme\nLtd', 'Acme\u2028Ltd', 'Acme\u0085']) {
      const bad = await register(base, { client_name: name, redirect_uris: [REDIRECT] });
      expect([JSON.stringify(name), bad.status, bad.body.error, bad.body.error_description]).toEqual([
        JSON.stringify(name),
        400,
        'invalid_client_metadata',
        expect.stringMatching(/^client_name: must not contain control, line-breaking or bidirectional formatting characters \(U\+[0-9A-F]{4}\)$/),
      ]);
    }
    expect((await register(base, { client_name: 'مساعد الذكاء Assistant', redirect_uris: [REDIRECT] })).status).toBe(201);
    // A page of the client is a web page: a script or inline document would run in whoever opens the link.
    for (const uri of ['javascript:alert(document.cookie)', 'JavaScript:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox', 'file:///etc/passwd']) {
      const bad = await register(base, { redirect_uris: [REDIRECT], client_uri: uri });
      expect([uri, bad.status, bad.body.error, bad.body.error_description]).toEqual([uri, 400, 'invalid_client_metadata', 'client_uri: must be an http or https URL']);
    }
    expect((await register(base, { redirect_uris: [REDIRECT], client_uri: 'https://app.example/about' })).body.client_uri).toBe('https://app.example/about');
    const noUris = await register(base, { client_name: 'x' });
    expect([noUris.status, noUris.body.error, noUris.body.error_description]).toEqual([400, 'invalid_client_metadata', expect.stringContaining('redirect_uris')]);
    const method = await register(base, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt' });
    expect([method.status, method.body.error, method.body.error_description]).toEqual([400, 'invalid_client_metadata', expect.stringContaining('token_endpoint_auth_method')]);
    const confidential = await register(base, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' });
    expect(confidential.body.client_secret).toMatch(/^mcs_/);
  });

  it('authorize: unknown client or unregistered redirect URI is an error page, never a redirect; else 302 to consent with the query unchanged', async () => {
    const c = await client();
    const { challenge } = pkcePair();
    const get = (q: string) => fetch(`${base}/oauth/authorize?${q}`, { redirect: 'manual' });
    const unknown = await get(`client_id=mcl_nope&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code`);
    expect([unknown.status, unknown.headers.get('location'), unknown.headers.get('content-type')]).toEqual([400, null, 'text/html; charset=utf-8']);
    expect(unknown.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    // A client_id Postgres cannot hold is unknown too: the page, not the error filter's JSON.
    const nul = await get(`client_id=mcl_%00&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code`);
    expect([nul.status, nul.headers.get('content-type'), await nul.text()]).toEqual([400, 'text/html; charset=utf-8', expect.stringContaining('unknown client_id')]);
    for (const uri of ['http://127.0.0.1:9/callback/extra', 'http://127.0.0.1:9/call', 'https://evil.example/callback']) {
      const res = await get(`client_id=${c.client_id}&redirect_uri=${encodeURIComponent(uri)}&response_type=code`);
      expect([uri, res.status, res.headers.get('location')]).toEqual([uri, 400, null]);
    }
    const query = `response_type=code&client_id=${c.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&code_challenge=${challenge}&code_challenge_method=S256&state=a%20b&scope=PROJECT_AUDIENCE_READ`;
    const ok = await get(query);
    expect([ok.status, ok.headers.get('location')]).toEqual([302, `/oauth/consent?${query}`]);
  });

  it('authorize: plain PKCE, a missing challenge, a bad response_type or scope: the consent screen, no redirect before sign-in; then a link back to the client with state (OAuth 2.1 §7.12.2)', async () => {
    const c = await client();
    const t = await seedUser(db);
    const { challenge } = pkcePair();
    const start = `client_id=${c.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&state=xyz`;
    const cases: Array<[string, string]> = [
      [`${start}&response_type=code&code_challenge=${challenge}&code_challenge_method=plain`, 'invalid_request'],
      [`${start}&response_type=code&code_challenge=${challenge}`, 'invalid_request'],
      [`${start}&response_type=code`, 'invalid_request'],
      [`${start}&response_type=token&code_challenge=${challenge}&code_challenge_method=S256`, 'unsupported_response_type'],
      // A missing required parameter is invalid_request (OAuth 2.1 §4.1.2.1), not an unsupported value.
      [`${start}&code_challenge=${challenge}&code_challenge_method=S256`, 'invalid_request'],
      [`${start}&response_type=code&code_challenge=${challenge}&code_challenge_method=S256&scope=ADMIN`, 'invalid_scope'],
      [`${start}&response_type=code&code_challenge=${challenge}&code_challenge_method=S256&scope=PROJECT_INGEST_WRITE`, 'invalid_scope'],
    ];
    for (const [q, error] of cases) {
      const to = await errorLinkAfterSignIn(base, db, t.userId, q);
      expect([q, to.origin + to.pathname, to.searchParams.get('error'), to.searchParams.get('state'), to.searchParams.get('iss')]).toEqual([q, REDIRECT, error, 'xyz', 'http://127.0.0.1:8080']);
    }
  });

  it('authorize: error_description holds only the characters RFC 6749 §4.1.2.1 allows, whatever the client sent (a scope or parameter name in Unicode, quotes, backslash)', async () => {
    const c = await client();
    const t = await seedUser(db);
    const { challenge } = pkcePair();
    const start = `client_id=${c.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&code_challenge=${challenge}&code_challenge_method=S256`;
    for (const extra of [`scope=${encodeURIComponent('PROJECT_AUDIENCE_READ Écriture "x"\\ 日本\u0007')}`, `${encodeURIComponent('é"\\')}=1&${encodeURIComponent('é"\\')}=2`]) {
      const to = await errorLinkAfterSignIn(base, db, t.userId, `${start}&${extra}`);
      const description = to.searchParams.get('error_description')!;
      expect([extra, description.length > 0, /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/.test(description)]).toEqual([extra, true, true]);
    }
  });

  it('a registered scope (RFC 7591 §2) names known scopes only and bounds what the client may ask for', async () => {
    for (const scope of ['ADMIN', 'PROJECT_AUDIENCE_READ constructor', '__proto__', ' ']) {
      const bad = await register(base, { redirect_uris: [REDIRECT], scope });
      expect([scope, bad.status, bad.body.error, bad.body.error_description]).toEqual([scope, 400, 'invalid_client_metadata', expect.stringContaining('scope')]);
    }
    const c = await client({ scope: 'PROJECT_AUDIENCE_READ  PROJECT_DIRECT_WRITE PROJECT_AUDIENCE_READ' });
    expect(c.scope).toBe('PROJECT_AUDIENCE_READ PROJECT_DIRECT_WRITE');
    const { challenge } = pkcePair();
    const query = (clientId: string, scope?: string) =>
      `response_type=code&client_id=${clientId}&redirect_uri=${encodeURIComponent(REDIRECT)}&code_challenge=${challenge}&code_challenge_method=S256&state=s${scope === undefined ? '' : `&scope=${encodeURIComponent(scope)}`}`;
    const authorize = (clientId: string, scope?: string) => fetch(`${base}/oauth/authorize?${query(clientId, scope)}`, { redirect: 'manual' });
    for (const scope of ['PROJECT_DIRECT_WRITE', 'PROJECT_AUDIENCE_READ PROJECT_DIRECT_WRITE', undefined]) {
      expect([scope, (await authorize(c.client_id, scope)).headers.get('location')]).toEqual([scope, expect.stringMatching(/^\/oauth\/consent\?/)]);
    }
    const writeOnly = await client({ scope: 'PROJECT_DIRECT_WRITE' });
    const t = await seedUser(db);
    for (const [clientId, scope] of [[c.client_id, 'PROJECT_AUDIENCE_READ PROJECT_CAMPAIGN_READ'], [writeOnly.client_id, undefined]]) {
      const to = await errorLinkAfterSignIn(base, db, t.userId, query(clientId!, scope));
      expect([scope, to.origin + to.pathname, to.searchParams.get('error'), to.searchParams.get('state')]).toEqual([scope, REDIRECT, 'invalid_scope', 's']);
    }
  });

  it('authorize: a loopback IP redirect URI matches with any port, everything else exactly (OAuth 2.1 §2.3.1, RFC 8252 §7.3)', async () => {
    const c = await client({ redirect_uris: ['http://127.0.0.1/callback', 'http://[::1]:8000/cb', 'http://localhost:3000/cb'] });
    const { challenge } = pkcePair();
    const get = (uri: string) => fetch(`${base}/oauth/authorize?response_type=code&client_id=${c.client_id}&code_challenge=${challenge}&code_challenge_method=S256&redirect_uri=${encodeURIComponent(uri)}`, { redirect: 'manual' });
    for (const uri of ['http://127.0.0.1:53123/callback', 'http://127.0.0.1/callback', 'http://[::1]/cb', 'http://[::1]:61023/cb']) {
      const res = await get(uri);
      expect([uri, res.status, res.headers.get('location')]).toEqual([uri, 302, expect.stringMatching(/^\/oauth\/consent\?/)]);
    }
    const refused = [
      'http://127.0.0.1:53123/callback/x',
      'http://127.0.0.1:53123/Callback',
      'http://127.0.0.1:53123/callback?x=1',
      'https://127.0.0.1:53123/callback',
      'http://127.0.0.2:53123/callback',
      'http://user@127.0.0.1:53123/callback',
      'http://127.0.0.1:99999/callback',
      // `localhost` is a name, not a loopback IP literal: its port is matched exactly (RFC 8252 §8.3).
      'http://localhost:3001/cb',
    ];
    for (const uri of refused) {
      const res = await get(uri);
      expect([uri, res.status, res.headers.get('location')]).toEqual([uri, 400, null]);
    }
  });

  it('authorize: a parameter given twice (RFC 6749 §3.1) is an error page for client_id and redirect_uri, else invalid_request back to the client after sign-in', async () => {
    const c = await client();
    const t = await seedUser(db);
    const { challenge } = pkcePair();
    const redirect = `redirect_uri=${encodeURIComponent(REDIRECT)}`;
    const start = `response_type=code&client_id=${c.client_id}&code_challenge=${challenge}&code_challenge_method=S256`;
    const get = (q: string) => fetch(`${base}/oauth/authorize?${q}`, { redirect: 'manual' });
    for (const q of [`${start}&${redirect}&client_id=${c.client_id}`, `${start}&${redirect}&${redirect}`, `${start}&${redirect}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`]) {
      const res = await get(q);
      expect([q, res.status, res.headers.get('location')]).toEqual([q, 400, null]);
      expect(await res.text()).toContain('must be given once');
    }
    for (const [extra, name, state] of [
      ['&state=a&scope=PROJECT_AUDIENCE_READ&scope=PROJECT_DIRECT_WRITE', 'scope', 'a'],
      ['&state=a&state=b', 'state', null],
      [`&state=a&code_challenge=${challenge}`, 'code_challenge', 'a'],
      ['&state=a&response_type=code', 'response_type', 'a'],
      ['&state=a&__proto__=x&__proto__=y', '__proto__', 'a'],
    ]) {
      const to = await errorLinkAfterSignIn(base, db, t.userId, `${start}&${redirect}${extra}`);
      expect([extra, to.origin + to.pathname, to.searchParams.get('error'), to.searchParams.get('error_description'), to.searchParams.get('state')]).toEqual([extra, REDIRECT, 'invalid_request', `${name} must be given once`, state]);
    }
  });

  it('RFC 8707: only this API is a resource; a foreign or repeated one is invalid_target; the token carries the grant\'s', async () => {
    const c = await client();
    const { verifier, challenge } = pkcePair();
    const start = `response_type=code&client_id=${c.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&code_challenge=${challenge}&code_challenge_method=S256&state=r`;
    const authorize = (extra: string) => fetch(`${base}/oauth/authorize?${start}${extra}`, { redirect: 'manual' });
    const t = await seedUser(db);
    for (const extra of ['&resource=https%3A%2F%2Fother.example%2Fv1', '&resource=http%3A%2F%2F127.0.0.1%3A8080', '&resource=http%3A%2F%2F127.0.0.1%3A8080%2Fv1&resource=https%3A%2F%2Fother.example%2Fv1']) {
      const to = await errorLinkAfterSignIn(base, db, t.userId, `${start}${extra}`);
      expect([extra, to.searchParams.get('error'), to.searchParams.get('state')]).toEqual([extra, 'invalid_target', 'r']);
    }
    for (const extra of ['&resource=http%3A%2F%2F127.0.0.1%3A8080%2Fv1', '&resource=http%3A%2F%2F127.0.0.1%3A8080%2Fv1%2F']) {
      expect((await authorize(extra)).headers.get('location')).toBe(`/oauth/consent?${start}${extra}`);
    }

    const bound = await approvedCode(db, t, c.client_id, REDIRECT, challenge, undefined, 'http://127.0.0.1:8080/v1');
    const foreign = await exchange({ client_id: c.client_id, code: bound.code, code_verifier: verifier, resource: 'https://other.example/v1' });
    expect([foreign.status, foreign.body.error]).toEqual([400, 'invalid_target']);
    const ok = await exchange({ client_id: c.client_id, code: bound.code, code_verifier: verifier, resource: 'http://127.0.0.1:8080/v1' });
    expect(ok.status).toBe(200);
    expect((await db.query(`SELECT resource FROM tokens WHERE oauth_grant_id = $1`, [bound.grantId]))[0].resource).toBe('http://127.0.0.1:8080/v1');
  });

  it('code exchange: a 1 h oauth token row limited to the grant, a refresh token; both stored hashed', async () => {
    const { t, tokens, grantId } = await issued();
    expect(tokens.expires_in).toBeGreaterThanOrEqual(3599);
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'PROJECT_AUDIENCE_READ', access_token: expect.stringMatching(/^mld_oa_/), refresh_token: expect.stringMatching(/^mld_rt_/) });
    const [row] = await tokenRows(grantId);
    expect(row).toMatchObject({ kind: 'oauth', scopes: ['PROJECT_AUDIENCE_READ'], projects: [t.project.uid], user_id: t.userId, revoked_at: null });
    expect(Math.abs(row.expires_at.getTime() - Date.now() - 3600_000)).toBeLessThan(60_000);
    const stored = JSON.stringify(await db.query(`SELECT * FROM tokens WHERE oauth_grant_id = $1`, [grantId])) + JSON.stringify(await db.query(`SELECT * FROM oauth_refresh_tokens WHERE grant_id = $1`, [grantId]));
    expect(stored).not.toContain(tokens.access_token);
    expect(stored).not.toContain(tokens.refresh_token);
  });

  it('refusals (RFC 6749 §5.2): unknown code, wrong or missing verifier, redirect_uri mismatch, expired code, unsupported grant type', async () => {
    const t = await seedUser(db);
    const c = await client();
    const { verifier, challenge } = pkcePair();
    const fresh = async () => (await approvedCode(db, t, c.client_id, REDIRECT, challenge)).code;
    const cases: Array<[string, Record<string, string>, number, string]> = [
      ['unknown code', { client_id: c.client_id, code: 'nope', code_verifier: verifier }, 400, 'invalid_grant'],
      ['wrong verifier', { client_id: c.client_id, code: await fresh(), code_verifier: pkcePair().verifier }, 400, 'invalid_grant'],
      ['missing verifier', { client_id: c.client_id, code: await fresh() }, 400, 'invalid_grant'],
      // RFC 6749 §5.2 / OAuth 2.1 §3.2.4: a redirect URI that does not match the authorization request's is invalid_grant.
      ['redirect_uri prefix', { client_id: c.client_id, code: await fresh(), code_verifier: verifier, redirect_uri: `${REDIRECT}/x` }, 400, 'invalid_grant'],
      ['redirect_uri case', { client_id: c.client_id, code: await fresh(), code_verifier: verifier, redirect_uri: REDIRECT.replace('callback', 'Callback') }, 400, 'invalid_grant'],
      ['redirect_uri extra query', { client_id: c.client_id, code: await fresh(), code_verifier: verifier, redirect_uri: `${REDIRECT}?a=1` }, 400, 'invalid_grant'],
      // The authorization request named it (approvedCode's codes): the token request must too.
      ['redirect_uri missing', { client_id: c.client_id, code: await fresh(), code_verifier: verifier, redirect_uri: '' }, 400, 'invalid_request'],
      ['unknown client', { client_id: 'mcl_nope', code: await fresh(), code_verifier: verifier }, 400, 'invalid_client'],
      ['unsupported grant', { client_id: c.client_id, grant_type: 'password', username: 'a', password: 'b' }, 400, 'unsupported_grant_type'],
      ['client_credentials', { client_id: c.client_id, grant_type: 'client_credentials' }, 400, 'unsupported_grant_type'],
    ];
    for (const [name, fields, status, error] of cases) {
      const res = await exchange(fields);
      expect([name, res.status, res.body.error]).toEqual([name, status, error]);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    const expired = await fresh();
    await db.query(`UPDATE oauth_codes SET expires_at = now() - interval '1 second' WHERE code_hash = $1`, [hashToken(expired)]);
    const late = await exchange({ client_id: c.client_id, code: expired, code_verifier: verifier });
    expect([late.status, late.body.error, late.body.error_description]).toEqual([400, 'invalid_grant', expect.stringContaining('expired')]);
  });

  it("another client's code is refused", async () => {
    const t = await seedUser(db);
    const [a, b] = [await client(), await client()];
    const { verifier, challenge } = pkcePair();
    const { code } = await approvedCode(db, t, a.client_id, REDIRECT, challenge);
    const res = await exchange({ client_id: b.client_id, code, code_verifier: verifier });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('a reused code is refused and revokes the tokens issued from it', async () => {
    const { c, code, verifier, grantId } = await issued();
    const again = await exchange({ client_id: c.client_id, code, code_verifier: verifier });
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
    expect(await grantRevoked(grantId)).toBe(true);
    expect((await tokenRows(grantId)).every((r: { revoked_at: Date | null }) => r.revoked_at !== null)).toBe(true);
  });

  it('refresh: rotates; reusing a rotated refresh token revokes the whole grant', async () => {
    const { c, tokens, grantId } = await issued();
    const refresh = (token: string) => form(base, '/oauth/token', { grant_type: 'refresh_token', client_id: c.client_id, refresh_token: token });
    const next = await refresh(tokens.refresh_token);
    expect(next.status).toBe(200);
    expect(next.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(next.body.access_token).not.toBe(tokens.access_token);
    expect(await tokenRows(grantId)).toHaveLength(2);

    const reuse = await refresh(tokens.refresh_token);
    expect([reuse.status, reuse.body.error]).toEqual([400, 'invalid_grant']);
    expect(await grantRevoked(grantId)).toBe(true);
    expect((await tokenRows(grantId)).every((r: { revoked_at: Date | null }) => r.revoked_at !== null)).toBe(true);
    const after = await refresh(next.body.refresh_token);
    expect([after.status, after.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('refresh asking for fewer scopes: the access token has only those; the refresh token keeps the grant; more than granted is invalid_scope', async () => {
    const t = await seedUser(db);
    const c = await client();
    const { verifier, challenge } = pkcePair();
    const { code, grantId } = await approvedCode(db, t, c.client_id, REDIRECT, challenge, ['PROJECT_DIRECT_READ', 'PROJECT_DIRECT_WRITE']);
    const first = (await exchange({ client_id: c.client_id, code, code_verifier: verifier })).body;
    const refresh = (token: string, scope?: string) => form(base, '/oauth/token', { grant_type: 'refresh_token', client_id: c.client_id, refresh_token: token, ...(scope === undefined ? {} : { scope }) });
    const narrow = await refresh(first.refresh_token, 'PROJECT_DIRECT_READ');
    expect([narrow.status, narrow.body.scope]).toEqual([200, 'PROJECT_DIRECT_READ']);
    const scopesOf = async (token: string) => (await db.query(`SELECT scopes FROM tokens WHERE secret_hash = $1`, [hashToken(token)]))[0].scopes;
    expect(await scopesOf(narrow.body.access_token)).toEqual(['PROJECT_DIRECT_READ']);
    const wider = await refresh(narrow.body.refresh_token, 'PROJECT_DIRECT_READ PROJECT_AUDIENCE_READ');
    expect([wider.status, wider.body.error]).toEqual([400, 'invalid_scope']);
    const whole = await refresh(narrow.body.refresh_token);
    expect([whole.status, whole.body.scope]).toEqual([200, 'PROJECT_DIRECT_READ PROJECT_DIRECT_WRITE']);
    expect(await scopesOf(whole.body.access_token)).toEqual(['PROJECT_DIRECT_READ', 'PROJECT_DIRECT_WRITE']);
    expect(await grantRevoked(grantId)).toBe(false);
  });

  it('the operator withdrawing the sensitive-scope allowance (ADR 0144) holds for existing grants: a refresh no longer carries those scopes', async () => {
    const t = await seedUser(db);
    const allow = (on: boolean) => db.query(`UPDATE organizations SET oauth_sensitive_scopes = $2 WHERE id = $1`, [t.organization.id, on]);
    await allow(true);
    const c = await client();
    const { verifier, challenge } = pkcePair();
    const { code } = await approvedCode(db, t, c.client_id, REDIRECT, challenge, ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_FULL']);
    const first = (await exchange({ client_id: c.client_id, code, code_verifier: verifier })).body;
    expect(first.scope).toBe('PROJECT_AUDIENCE_READ PROJECT_AUDIENCE_DATA_FULL');
    const refresh = (token: string) => form(base, '/oauth/token', { grant_type: 'refresh_token', client_id: c.client_id, refresh_token: token });
    const scopesOf = async (token: string) => (await db.query(`SELECT scopes FROM tokens WHERE secret_hash = $1`, [hashToken(token)]))[0].scopes;
    await allow(false);
    const withdrawn = await refresh(first.refresh_token);
    expect([withdrawn.status, withdrawn.body.scope, await scopesOf(withdrawn.body.access_token)]).toEqual([200, 'PROJECT_AUDIENCE_READ', ['PROJECT_AUDIENCE_READ']]);
    await allow(true);
    const restored = await refresh(withdrawn.body.refresh_token);
    expect([restored.status, restored.body.scope]).toEqual([200, 'PROJECT_AUDIENCE_READ PROJECT_AUDIENCE_DATA_FULL']);
  });

  it('a failure of ours at the token endpoint is a logged 500 that reveals nothing internal, as everywhere else', async () => {
    const t = await seedUser(db);
    const c = await client();
    const { verifier, challenge } = pkcePair();
    const { code } = await approvedCode(db, t, c.client_id, REDIRECT, challenge);
    const store = jest.spyOn(OAuthRepository.prototype, 'issueTokens').mockRejectedValueOnce(new Error('connect ECONNREFUSED 10.9.8.7:5432'));
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const res = await exchange({ client_id: c.client_id, code, code_verifier: verifier });
      expect([res.status, JSON.stringify(res.body).includes('ECONNREFUSED'), logged.mock.calls.length]).toEqual([500, false, 1]);
    } finally {
      store.mockRestore();
      logged.mockRestore();
    }
  });

  it('refresh with an empty or blank scope is invalid_scope naming it, and the refresh token is not spent', async () => {
    const { c, tokens, grantId } = await issued();
    for (const scope of ['', '   ']) {
      const refused = await form(base, '/oauth/token', { grant_type: 'refresh_token', client_id: c.client_id, refresh_token: tokens.refresh_token, scope });
      expect([JSON.stringify(scope), refused.status, refused.body.error, refused.body.error_description]).toEqual([JSON.stringify(scope), 400, 'invalid_scope', expect.stringContaining('scope')]);
    }
    const retry = await form(base, '/oauth/token', { grant_type: 'refresh_token', client_id: c.client_id, refresh_token: tokens.refresh_token });
    expect([retry.status, await grantRevoked(grantId)]).toEqual([200, false]);
  });

  it('a parameter given twice is invalid_request naming it (RFC 6749 §3.1), at the token and revocation endpoints', async () => {
    const { c, tokens } = await issued();
    const twice = async (path: string, body: string) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      return [res.status, ((await res.json()) as { error: string; error_description: string })];
    };
    const rt = encodeURIComponent(tokens.refresh_token);
    expect(await twice('/oauth/token', `grant_type=refresh_token&client_id=${c.client_id}&refresh_token=${rt}&refresh_token=${rt}`)).toEqual([
      400,
      { error: 'invalid_request', error_description: 'refresh_token must be given once, as text' },
    ]);
    expect(await twice('/oauth/token', `grant_type=authorization_code&client_id=${c.client_id}&code=a&code=b&code_verifier=x`)).toEqual([
      400,
      { error: 'invalid_request', error_description: 'code must be given once, as text' },
    ]);
    expect(await twice('/oauth/revoke', `client_id=${c.client_id}&token=a&token=b`)).toEqual([400, { error: 'invalid_request', error_description: 'token must be given once, as text' }]);
    // A name the client sent goes into error_description within RFC 6749 §5.2's characters.
    const odd = encodeURIComponent('é"\\');
    expect(await twice('/oauth/token', `grant_type=refresh_token&client_id=${c.client_id}&${odd}=1&${odd}=2`)).toEqual([400, { error: 'invalid_request', error_description: '??? must be given once, as text' }]);
    // The refresh token was not spent by the refused request.
    expect((await form(base, '/oauth/token', { grant_type: 'refresh_token', client_id: c.client_id, refresh_token: tokens.refresh_token })).status).toBe(200);
  });

  it('revocation (RFC 7009): an access token alone; a refresh token ends the grant; unknown tokens 200; bad client 401', async () => {
    const { c, tokens, grantId } = await issued();
    const revoke = (fields: Record<string, string>) => form(base, '/oauth/revoke', fields);
    expect((await revoke({ client_id: c.client_id, token: 'whatever' })).status).toBe(200);
    expect((await revoke({ client_id: 'mcl_nope', token: tokens.access_token })).status).toBe(401);
    const other = await client();
    expect((await revoke({ client_id: other.client_id, token: tokens.access_token })).status).toBe(200);
    expect((await tokenRows(grantId))[0].revoked_at).toBeNull();

    expect((await revoke({ client_id: c.client_id, token: tokens.access_token })).status).toBe(200);
    expect((await tokenRows(grantId))[0].revoked_at).not.toBeNull();
    expect(await grantRevoked(grantId)).toBe(false);
    expect((await revoke({ client_id: c.client_id, token: tokens.refresh_token, token_type_hint: 'refresh_token' })).status).toBe(200);
    expect(await grantRevoked(grantId)).toBe(true);
  });

  it('registered grant_types (RFC 7591 §2) hold: a client without refresh_token gets no refresh token and may not refresh', async () => {
    const t = await seedUser(db);
    const refreshOnly = await register(base, { redirect_uris: [REDIRECT], grant_types: ['refresh_token'] });
    expect([refreshOnly.status, refreshOnly.body.error, refreshOnly.body.error_description]).toEqual([400, 'invalid_client_metadata', expect.stringContaining('grant_types')]);
    const c = await client({ grant_types: ['authorization_code'] });
    expect(c.grant_types).toEqual(['authorization_code']);
    const { verifier, challenge } = pkcePair();
    const { code, grantId } = await approvedCode(db, t, c.client_id, REDIRECT, challenge);
    const res = await exchange({ client_id: c.client_id, code, code_verifier: verifier });
    expect([res.status, res.body.refresh_token, res.body.access_token]).toEqual([200, undefined, expect.stringMatching(/^mld_oa_/)]);
    expect(await db.query(`SELECT 1 FROM oauth_refresh_tokens WHERE grant_id = $1`, [grantId])).toHaveLength(0);
    const refresh = await form(base, '/oauth/token', { grant_type: 'refresh_token', client_id: c.client_id, refresh_token: 'mld_rt_whatever' });
    expect([refresh.status, refresh.body.error]).toEqual([400, 'unauthorized_client']);
  });

  it('a confidential client must present its secret', async () => {
    const t = await seedUser(db);
    const c = await client({ token_endpoint_auth_method: 'client_secret_basic' });
    const { verifier, challenge } = pkcePair();
    const { code } = await approvedCode(db, t, c.client_id, REDIRECT, challenge);
    const without = await exchange({ client_id: c.client_id, code, code_verifier: verifier });
    expect([without.status, without.body.error]).toEqual([401, 'invalid_client']);
    const second = await approvedCode(db, t, c.client_id, REDIRECT, challenge);
    const basic = Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64');
    const ok = await form(base, '/oauth/token', { grant_type: 'authorization_code', redirect_uri: REDIRECT, code: second.code, code_verifier: verifier }, { authorization: `Basic ${basic}` });
    expect([ok.status, ok.headers.get('cache-control'), ok.headers.get('pragma')]).toEqual([200, 'no-store', 'no-cache']);
    // RFC 6749 §5.2: client authentication attempted through the header and failed: 401 with a challenge.
    const third = await approvedCode(db, t, c.client_id, REDIRECT, challenge);
    const wrong = Buffer.from(`${c.client_id}:mcs_wrong`).toString('base64');
    const refused = await form(base, '/oauth/token', { grant_type: 'authorization_code', redirect_uri: REDIRECT, code: third.code, code_verifier: verifier }, { authorization: `Basic ${wrong}` });
    expect([refused.status, refused.body.error, refused.headers.get('www-authenticate'), refused.headers.get('cache-control')]).toEqual([401, 'invalid_client', expect.stringMatching(/^Basic /), 'no-store']);
  });

  it('a client authenticates only the way it registered (RFC 7591 §2): another way is 401 invalid_client, before the code is spent', async () => {
    const t = await seedUser(db);
    const { verifier, challenge } = pkcePair();
    const basicOf = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });
    const basicClient = await client({ token_endpoint_auth_method: 'client_secret_basic' });
    const postClient = await client({ token_endpoint_auth_method: 'client_secret_post' });
    const publicClient = await client();
    type Way = [Record<string, string>, Record<string, string>];
    const ways: [string, Record<string, any>, Way, Way][] = [ // eslint-disable-line @typescript-eslint/no-explicit-any
      ['basic client, secret in the form', basicClient, [{ client_id: basicClient.client_id, client_secret: basicClient.client_secret }, {}], [{}, basicOf(basicClient.client_id, basicClient.client_secret)]],
      ['basic client, header and form', basicClient, [{ client_secret: basicClient.client_secret }, basicOf(basicClient.client_id, basicClient.client_secret)], [{}, basicOf(basicClient.client_id, basicClient.client_secret)]],
      ['post client, Basic header', postClient, [{}, basicOf(postClient.client_id, postClient.client_secret)], [{ client_id: postClient.client_id, client_secret: postClient.client_secret }, {}]],
      ['post client, no secret', postClient, [{ client_id: postClient.client_id }, {}], [{ client_id: postClient.client_id, client_secret: postClient.client_secret }, {}]],
      ['public client, a secret in the form', publicClient, [{ client_id: publicClient.client_id, client_secret: 'mcs_made_up' }, {}], [{ client_id: publicClient.client_id }, {}]],
      ['public client, Basic with an empty secret', publicClient, [{}, basicOf(publicClient.client_id, '')], [{ client_id: publicClient.client_id }, {}]],
    ];
    for (const [name, c, [wrongFields, wrongHeaders], [rightFields, rightHeaders]] of ways) {
      const { code } = await approvedCode(db, t, c.client_id, REDIRECT, challenge);
      const wrong = await form(base, '/oauth/token', { grant_type: 'authorization_code', redirect_uri: REDIRECT, code, code_verifier: verifier, ...wrongFields }, wrongHeaders);
      expect([name, wrong.status, wrong.body.error, wrong.body.error_description, wrong.headers.get('www-authenticate'), wrong.headers.get('cache-control')]).toEqual([
        name,
        401,
        'invalid_client',
        expect.stringContaining(`token_endpoint_auth_method must be ${c.token_endpoint_auth_method}`),
        // RFC 9110 §15.5.2: every 401 carries a challenge (a client without Basic gets one too).
        expect.stringMatching(/^Basic /),
        'no-store',
      ]);
      const right = await form(base, '/oauth/token', { grant_type: 'authorization_code', redirect_uri: REDIRECT, code, code_verifier: verifier, ...rightFields }, rightHeaders);
      expect([name, right.status]).toEqual([name, 200]);
    }
    // Revocation (RFC 7009 §2.1) holds the client to the same method.
    const revokeWrong = await form(base, '/oauth/revoke', { token: 'whatever' }, basicOf(postClient.client_id, postClient.client_secret));
    const revokeRight = await form(base, '/oauth/revoke', { token: 'whatever', client_id: postClient.client_id, client_secret: postClient.client_secret });
    expect([revokeWrong.status, revokeWrong.body.error, revokeRight.status]).toEqual([401, 'invalid_client', 200]);
  });
});

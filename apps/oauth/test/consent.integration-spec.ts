import { randomUUID } from 'node:crypto';
import { hashPassword, hashToken } from '@meld/auth';
import type { INestApplication } from '@nestjs/common';
import type { DataSource, MigrationInterface } from 'typeorm';
import { form, pkcePair, register, returnLink, startOAuth } from './app.fixture';
import { migrations } from '@meld/db';
import { seedTenancy } from '@meld/fixtures';

const REDIRECT = 'http://127.0.0.1:9/callback';
const PASSWORD = 'correct horse battery staple';

describe('oauth consent screen (real Postgres)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let passwordHash: string;

  beforeAll(async () => {
    ({ app, base, db } = await startOAuth());
    passwordHash = await hashPassword(PASSWORD);
  });
  afterAll(() => app?.close());

  /** A browser in miniature: keeps cookies, never follows redirects. */
  function browser() {
    const jar = new Map<string, string>();
    const remember = (res: Response) => {
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const eq = pair.indexOf('=');
        jar.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      return res;
    };
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    return {
      jar,
      get: async (path: string) => remember(await fetch(`${base}${path}`, { redirect: 'manual', headers: { cookie: cookie() } })),
      post: async (path: string, fields: Record<string, string | string[]>) => {
        const body = new URLSearchParams();
        for (const [k, v] of Object.entries(fields)) for (const x of ([] as string[]).concat(v)) body.append(k, x);
        return remember(await fetch(`${base}${path}`, { method: 'POST', redirect: 'manual', headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() }));
      },
    };
  }
  const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1];

  async function setup(scope = 'PROJECT_AUDIENCE_READ PROJECT_AUDIENCE_DATA_FULL', sensitive = false, { namesRedirect = true } = {}) {
    const t = await seedTenancy(db, 'consent');
    const second = await seedTenancy(db, 'other');
    await db.query(`UPDATE projects SET organization_id = $1 WHERE id = $2`, [t.organization.id, second.project.id]);
    await db.query(`UPDATE organizations SET oauth_sensitive_scopes = $2 WHERE id = $1`, [t.organization.id, sensitive]);
    const email = `u-${randomUUID()}@example.test`;
    await db.query(`INSERT INTO users (organization_id, email, password_hash) VALUES ($1, $2, $3)`, [t.organization.id, email, passwordHash]);
    const c = (await register(base, { client_name: 'Assistant <b>AI</b>', redirect_uris: [REDIRECT] })).body;
    const { verifier, challenge } = pkcePair();
    const redirect = namesRedirect ? `&redirect_uri=${encodeURIComponent(REDIRECT)}` : '';
    const query = `response_type=code&client_id=${c.client_id}${redirect}&code_challenge=${challenge}&code_challenge_method=S256&state=s1&scope=${encodeURIComponent(scope)}`;
    return { t, other: second, email, c, verifier, query };
  }

  async function signIn(b: ReturnType<typeof browser>, s: Awaited<ReturnType<typeof setup>>) {
    const login = await b.get(`/oauth/consent?${s.query}`);
    const html = await login.text();
    const res = await b.post('/oauth/consent/login', { csrf: csrfOf(html), request: s.query, email: s.email, password: PASSWORD });
    expect([res.status, res.headers.get('location')]).toEqual([303, `/oauth/consent?${s.query}`]);
    const page = await b.get(res.headers.get('location')!);
    return { page, html: await page.text() };
  }

  it('login page: headers, escaped client name, redirect host, cookies HttpOnly SameSite=Lax (not Secure on loopback)', async () => {
    const s = await setup();
    const b = browser();
    const res = await b.get(`/oauth/consent?${s.query}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    // Its form ends on our own consent page (303), never at the client: the client's origin is not a form target here.
    expect(res.headers.get('content-security-policy')).toContain("form-action 'self';");
    const html = await res.text();
    expect(html).toContain('Assistant &lt;b&gt;AI&lt;/b&gt;');
    expect(html).toContain('127.0.0.1:9');
    expect(html).not.toContain('<script');
    const setCookie = res.headers.getSetCookie().join('\n');
    expect(setCookie).toMatch(/meld_oauth_csrf=[^;]+; Path=\/oauth; HttpOnly; SameSite=Lax/);
    expect(setCookie).not.toContain('Secure');
    expect((await b.get('/oauth/consent.css')).headers.get('content-type')).toContain('text/css');
  });

  it('approve: projects and scopes in plain words, sensitive scopes withheld unless allowed; code redirect with state; the code exchanges', async () => {
    const s = await setup();
    const b = browser();
    const { page, html } = await signIn(b, s);
    // Browsers hold the redirect after the form post to form-action too (ADR 0148).
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9;");
    expect(html).toContain('read audience contacts');
    expect(html).toContain(s.t.project.uid);
    expect(html).toContain(s.other.project.uid);
    expect(html).toMatch(/Not available to applications in this organization: <code>PROJECT_AUDIENCE_DATA_FULL<\/code>/);
    const res = await b.post('/oauth/consent/decision', { csrf: csrfOf(html), request: s.query, decision: 'approve', projects: [s.t.project.uid, 'someone-elses-project'] });
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get('location')!);
    expect([to.origin + to.pathname, to.searchParams.get('state'), to.searchParams.get('iss')]).toEqual([REDIRECT, 's1', 'http://127.0.0.1:8080']);
    const token = await form(base, '/oauth/token', { grant_type: 'authorization_code', client_id: s.c.client_id, redirect_uri: REDIRECT, code: to.searchParams.get('code')!, code_verifier: s.verifier });
    expect([token.status, token.body.scope]).toEqual([200, 'PROJECT_AUDIENCE_READ']);
    const [row] = await db.query(`SELECT projects, scopes FROM tokens WHERE organization_id = $1 AND kind = 'oauth'`, [s.t.organization.id]);
    expect(row).toEqual({ projects: [s.t.project.uid], scopes: ['PROJECT_AUDIENCE_READ'] });
  });

  it('a request without redirect_uri (the client has one): the code goes to that URI and exchanges without it (RFC 6749 §4.1.3)', async () => {
    const s = await setup('PROJECT_AUDIENCE_READ', false, { namesRedirect: false });
    const b = browser();
    const { html } = await signIn(b, s);
    const res = await b.post('/oauth/consent/decision', { csrf: csrfOf(html), request: s.query, decision: 'approve', projects: [s.t.project.uid] });
    const to = new URL(res.headers.get('location')!);
    expect([res.status, to.origin + to.pathname]).toEqual([302, REDIRECT]);
    const token = await form(base, '/oauth/token', { grant_type: 'authorization_code', client_id: s.c.client_id, code: to.searchParams.get('code')!, code_verifier: s.verifier });
    expect([token.status, token.body.error_description, token.body.scope]).toEqual([200, undefined, 'PROJECT_AUDIENCE_READ']);
  });

  it('the operator allowance lets the sensitive scopes through', async () => {
    const s = await setup('PROJECT_AUDIENCE_DATA_FULL PROJECT_AGGREGATIONS', true);
    const b = browser();
    const { html } = await signIn(b, s);
    expect(html).not.toContain('Not available');
    const res = await b.post('/oauth/consent/decision', { csrf: csrfOf(html), request: s.query, decision: 'approve', projects: [s.t.project.uid] });
    const [grant] = await db.query(`SELECT scopes FROM oauth_grants WHERE client_id = $1`, [s.c.client_id]);
    expect([res.status, grant.scopes]).toEqual([302, ['PROJECT_AUDIENCE_DATA_FULL', 'PROJECT_AGGREGATIONS']]);
  });

  it('deny: redirect with error=access_denied and state, no grant', async () => {
    const s = await setup();
    const b = browser();
    const { html } = await signIn(b, s);
    const res = await b.post('/oauth/consent/decision', { csrf: csrfOf(html), request: s.query, decision: 'deny' });
    const to = new URL(res.headers.get('location')!);
    expect([res.status, to.searchParams.get('error'), to.searchParams.get('state'), to.searchParams.get('code'), res.headers.get('cache-control')]).toEqual([302, 'access_denied', 's1', null, 'no-store']);
    expect(await db.query(`SELECT 1 FROM oauth_grants WHERE client_id = $1`, [s.c.client_id])).toHaveLength(0);
  });

  it('CSRF: a form without the cookie value is refused', async () => {
    const s = await setup();
    const b = browser();
    const { html } = await signIn(b, s);
    const forged = await b.post('/oauth/consent/decision', { csrf: 'x'.repeat(43), request: s.query, decision: 'approve', projects: [s.t.project.uid] });
    expect(forged.status).toBe(403);
    b.jar.delete('meld_oauth_csrf');
    const noCookie = await b.post('/oauth/consent/decision', { csrf: csrfOf(html), request: s.query, decision: 'approve', projects: [s.t.project.uid] });
    expect(noCookie.status).toBe(403);
    expect(await db.query(`SELECT 1 FROM oauth_grants WHERE client_id = $1`, [s.c.client_id])).toHaveLength(0);
  });

  it('a client name stored with bidi or control characters (before registration refused them) is shown isolated, each such character as U+FFFD', async () => {
    const s = await setup('PROJECT_AUDIENCE_READ <i>x</i>');
    // Would read "Acme" then, reversed, the rest of the heading: "...tnuocca dleM ruoy esu ot stnaw".
    await db.query(`UPDATE oauth_clients SET name = $2 WHERE id = $1`, [s.c.client_id, 'Acme\u202E\u2066\u200F\u0085']);
    const b = browser();
    const login = await (await b.get(`/oauth/consent?${s.query}`)).text();
    expect(login).toContain('<h1><strong><bdi>Acme\uFFFD\uFFFD\uFFFD\uFFFD</bdi></strong> wants to use your Meld account</h1>');
    const res = await b.post('/oauth/consent/login', { csrf: csrfOf(login), request: s.query, email: s.email, password: PASSWORD });
    const failed = await (await b.get(res.headers.get('location')!)).text();
    expect(failed).toContain('<h1>The request of <strong><bdi>Acme\uFFFD\uFFFD\uFFFD\uFFFD</bdi></strong> cannot be completed</h1>');
  });

  it('a request field with characters a browser would have encoded (a hand-made form) is answered, the Location percent-encoded', async () => {
    const s = await setup('PROJECT_AUDIENCE_READ');
    const csrf = 'c'.repeat(43);
    const request = `${s.query.replace('state=s1', 'state=s\u2028\u2713')}`;
    // No session: the decision sends the browser back to the screen. The form's CSRF pair is the sender's own.
    const res = await fetch(`${base}/oauth/consent/decision`, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(5000),
      headers: { cookie: `meld_oauth_csrf=${csrf}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, request, decision: 'approve' }).toString(),
    });
    expect([res.status, res.headers.get('location')]).toEqual([303, `/oauth/consent?${s.query.replace('state=s1', 'state=s%E2%80%A8%E2%9C%93')}`]);
  });

  it('signing in rotates the CSRF cookie: a value set or read before the sign-in does not pass the consent form', async () => {
    const s = await setup();
    const b = browser();
    // Planted by someone who can set cookies for the host (a sibling subdomain), or read off the sign-in page.
    const planted = 'p'.repeat(43);
    b.jar.set('meld_oauth_csrf', planted);
    expect(csrfOf(await (await b.get(`/oauth/consent?${s.query}`)).text())).toBe(planted);
    const login = await b.post('/oauth/consent/login', { csrf: planted, request: s.query, email: s.email, password: PASSWORD });
    expect([login.status, b.jar.get('meld_oauth_csrf')]).toEqual([303, expect.stringMatching(/^[A-Za-z0-9_-]{43}$/)]);
    expect(b.jar.get('meld_oauth_csrf')).not.toBe(planted);
    const old = await b.post('/oauth/consent/decision', { csrf: planted, request: s.query, decision: 'approve', projects: [s.t.project.uid] });
    expect(old.status).toBe(403);
    const html = await (await b.get(`/oauth/consent?${s.query}`)).text();
    const res = await b.post('/oauth/consent/decision', { csrf: csrfOf(html), request: s.query, decision: 'approve', projects: [s.t.project.uid] });
    expect(res.status).toBe(302);
  });

  it('one account per e-mail whatever its case, as the sign-in reads it: Postgres refuses a second spelling; the migration names colliding users by id only', async () => {
    const s = await setup();
    const shouting = s.email.toUpperCase();
    const insert = (runner: { query: DataSource['query'] }) => runner.query(`INSERT INTO users (organization_id, email, password_hash) VALUES ($1, $2, 'x') RETURNING id`, [s.t.organization.id, shouting]);
    await expect(insert(db)).rejects.toMatchObject({ code: '23505' });
    // Rows written before the index: the migration stops and names both users, not their e-mail.
    const [{ id: first }] = await db.query(`SELECT id FROM users WHERE email = $1`, [s.email]);
    const Migration = migrations.find((m) => m.name === 'UsersEmailCaseInsensitive1795269850000') as new () => MigrationInterface;
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(`DROP INDEX "UQ_users_email_lower"`);
      const [{ id: second }] = await insert(runner);
      const refused = await new Migration().up(runner).then(() => null, (err: Error) => err.message);
      expect(refused).toEqual(expect.stringContaining(`${first} ${second}`));
      expect(refused!.toLowerCase()).not.toContain(s.email);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('login attempts are rate-limited per e-mail; wrong passwords are 401 without saying which field', async () => {
    const s = await setup();
    const b = browser();
    const csrf = csrfOf(await (await b.get(`/oauth/consent?${s.query}`)).text());
    const attempt = (password: string) => b.post('/oauth/consent/login', { csrf, request: s.query, email: s.email, password });
    for (let i = 0; i < 5; i++) expect((await attempt('wrong')).status).toBe(401);
    // An e-mail Postgres cannot hold is a wrong e-mail like any (the page, not the error filter's JSON).
    const nul = await b.post('/oauth/consent/login', { csrf, request: s.query, email: `${s.email}\u0000`, password: 'wrong' });
    expect([nul.status, nul.headers.get('content-type'), await nul.text()]).toEqual([401, 'text/html; charset=utf-8', expect.stringContaining('Wrong e-mail or password.')]);
    const blocked = await attempt(PASSWORD);
    expect(blocked.status).toBe(429);
    expect(await blocked.text()).toContain('Too many failed sign-ins');
    // Every test signs in from 127.0.0.1: forget this test's failures so the per-IP limit never spills into a later run.
    await db.query(`DELETE FROM oauth_login_failures WHERE key = 'ip:127.0.0.1'`);
  });

  it('login attempts sent at once are limited too: no more wrong passwords are tried than the limit (ADR 0143)', async () => {
    const s = await setup();
    const b = browser();
    const csrf = csrfOf(await (await b.get(`/oauth/consent?${s.query}`)).text());
    // Twelve guesses in parallel: each was checked against a count read before any of them had failed.
    const statuses = await Promise.all(Array.from({ length: 12 }, (_, i) => b.post('/oauth/consent/login', { csrf, request: s.query, email: s.email, password: `guess-${i}` }).then((r) => r.status)));
    await db.query(`DELETE FROM oauth_login_failures WHERE key = 'ip:127.0.0.1'`);
    // Attempts that count one another at once may all be refused: never more than the limit is tried.
    const tried = statuses.filter((x) => x === 401).length;
    expect([tried <= 5, tried + statuses.filter((x) => x === 429).length]).toEqual([true, 12]);
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM oauth_login_failures WHERE key = $1`, [`email:${hashToken(s.email.toLowerCase())}`]);
    expect(n).toBe(tried);
    // A successful sign-in takes its attempt back: signing in more often than the limit is not locked out.
    const ok = await setup();
    for (let i = 0; i < 6; i++) await signIn(browser(), ok);
    const left = await db.query(`SELECT 1 FROM oauth_login_failures WHERE key = $1`, [`email:${hashToken(ok.email.toLowerCase())}`]);
    await db.query(`DELETE FROM oauth_login_failures WHERE key = 'ip:127.0.0.1'`);
    expect(left).toHaveLength(0);
  });

  it('an unknown e-mail takes as long as a wrong password: the timing does not tell which accounts exist (ADR 0143)', async () => {
    const s = await setup();
    const b = browser();
    const csrf = csrfOf(await (await b.get(`/oauth/consent?${s.query}`)).text());
    const timed = async (email: string) => {
      const started = performance.now();
      const res = await b.post('/oauth/consent/login', { csrf, request: s.query, email, password: 'wrong' });
      return { status: res.status, ms: performance.now() - started };
    };
    // The fastest of each: load on the machine only adds time, so the minimums are what each path costs.
    const fastest = (xs: number[]) => Math.min(...xs);
    const wrongPassword: number[] = [];
    const unknownEmail: number[] = [];
    for (let i = 0; i < 3; i++) {
      const [known, unknown] = [await timed(s.email), await timed(`nobody-${randomUUID()}@example.test`)];
      expect([known.status, unknown.status]).toEqual([401, 401]);
      wrongPassword.push(known.ms);
      unknownEmail.push(unknown.ms);
    }
    await db.query(`DELETE FROM oauth_login_failures WHERE key = 'ip:127.0.0.1'`);
    // A wrong password costs a scrypt (~0.2 s); an unknown e-mail answered in a few milliseconds.
    expect(fastest(unknownEmail)).toBeGreaterThan(fastest(wrongPassword) / 2);
  });

  it('a parameter given twice is refused at every step (RFC 6749 §3.1): the screen cannot show one scope and grant another', async () => {
    const s = await setup('PROJECT_AUDIENCE_READ');
    const b = browser();
    const { html } = await signIn(b, s);
    // The screen was shown for s.query; the hidden field is swapped for one with `scope` twice.
    const twice = `${s.query}&scope=PROJECT_DIRECT_WRITE`;
    const shown = await b.get(`/oauth/consent?${twice}`);
    const decided = await b.post('/oauth/consent/decision', { csrf: csrfOf(html), request: twice, decision: 'approve', projects: [s.t.project.uid] });
    const loggedIn = await b.post('/oauth/consent/login', { csrf: csrfOf(html), request: twice, email: s.email, password: PASSWORD });
    // Signed in, the error is a page linking back to the client, never a redirect (ADR 0357); the sign-in itself works as for a good request.
    for (const res of [shown, decided]) {
      const to = returnLink(await res.text());
      expect([res.status, res.headers.get('location'), to.origin + to.pathname, to.searchParams.get('error'), to.searchParams.get('error_description'), to.searchParams.get('code')]).toEqual([400, null, REDIRECT, 'invalid_request', 'scope must be given once', null]);
      // The link is an authorization response: no cache may keep the page, as at /oauth/authorize.
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    expect([loggedIn.status, loggedIn.headers.get('location')]).toEqual([303, `/oauth/consent?${twice}`]);
    expect(await db.query(`SELECT 1 FROM oauth_grants WHERE client_id = $1`, [s.c.client_id])).toHaveLength(0);
  });

  it('an erroneous request of a known client redirects nowhere before sign-in (OAuth 2.1 §7.12.2); after it, a page links to the error response', async () => {
    // Registration is open: the redirect URI may be a phishing site, and an invalid scope used to be a one-click 302 to it.
    const s = await setup('PROJECT_AUDIENCE_READ <i>x</i>');
    const authorize = await fetch(`${base}/oauth/authorize?${s.query}`, { redirect: 'manual' });
    expect([authorize.status, authorize.headers.get('location'), authorize.headers.get('cache-control')]).toEqual([302, `/oauth/consent?${s.query}`, 'no-store']);

    const b = browser();
    const login = await b.get(`/oauth/consent?${s.query}`);
    const loginHtml = await login.text();
    expect([login.status, login.headers.get('location')]).toEqual([200, null]);
    expect(loginHtml).toContain('Assistant &lt;b&gt;AI&lt;/b&gt;');
    expect(loginHtml).toContain('It will send you back to <strong>127.0.0.1:9</strong>');
    // Its form ends on our own consent page, so no other origin is allowed (ADR 0148).
    expect(login.headers.get('content-security-policy')).toContain("form-action 'self';");
    const signedIn = await b.post('/oauth/consent/login', { csrf: csrfOf(loginHtml), request: s.query, email: s.email, password: PASSWORD });
    expect([signedIn.status, signedIn.headers.get('location')]).toEqual([303, `/oauth/consent?${s.query}`]);

    const page = await b.get(signedIn.headers.get('location')!);
    const html = await page.text();
    expect([page.status, page.headers.get('location'), page.headers.get('cache-control'), page.headers.get('content-type')]).toEqual([400, null, 'no-store', 'text/html; charset=utf-8']);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(html).toContain('unknown scope &lt;i&gt;x&lt;/i&gt;');
    expect(html).not.toContain('<i>x</i>');
    expect(html).not.toContain('<script');
    expect(html).toContain('>Return to 127.0.0.1:9</a>');
    const to = returnLink(html);
    expect([to.origin + to.pathname, to.searchParams.get('error'), to.searchParams.get('error_description'), to.searchParams.get('state'), to.searchParams.get('iss'), to.searchParams.get('code')]).toEqual([
      REDIRECT,
      'invalid_scope',
      'unknown scope <i>x</i>',
      's1',
      'http://127.0.0.1:8080',
      null,
    ]);

    // Approve with the failing request (a forged form with the signed-in browser's CSRF value): the same page, nothing granted.
    const decided = await b.post('/oauth/consent/decision', { csrf: b.jar.get('meld_oauth_csrf')!, request: s.query, decision: 'approve', projects: [s.t.project.uid] });
    expect([decided.status, decided.headers.get('location'), returnLink(await decided.text()).href]).toEqual([400, null, to.href]);
    // Without a session the decision goes back to the sign-in, as for a good request.
    const other = browser();
    const otherCsrf = csrfOf(await (await other.get(`/oauth/consent?${s.query}`)).text());
    const anonymous = await other.post('/oauth/consent/decision', { csrf: otherCsrf, request: s.query, decision: 'deny' });
    expect([anonymous.status, anonymous.headers.get('location')]).toEqual([303, `/oauth/consent?${s.query}`]);
    expect(await db.query(`SELECT 1 FROM oauth_grants WHERE client_id = $1`, [s.c.client_id])).toHaveLength(0);
  });

  it('a tampered request is checked again: unknown redirect URI is an error page', async () => {
    const s = await setup();
    const b = browser();
    const { html } = await signIn(b, s);
    const tampered = s.query.replace(encodeURIComponent(REDIRECT), encodeURIComponent('https://evil.example/cb'));
    const res = await b.post('/oauth/consent/decision', { csrf: csrfOf(html), request: tampered, decision: 'approve', projects: [s.t.project.uid] });
    expect([res.status, res.headers.get('location')]).toEqual([400, null]);
  });
});

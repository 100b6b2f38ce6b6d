import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCOPE_DESCRIPTIONS } from '@meld/contracts';
import { authorizeQuery, pkcePair, registerOAuthClient, tokenRequest } from '@meld/fixtures';
import { Client } from 'pg';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { adminApi } from './support/admin-api';
import { SHARED_BASE, sharedSystem } from './support/shared-system';

// The whole OAuth flow in a real browser (issue 18, Tests): Debian's chromium, headless, driven
// by playwright-core, against the eight apps running as processes (the shared e2e system, ADR 0352). The client's redirect URI is
// a receiver on loopback, as a native or CLI client would run one.
const { ensureChromium, chromiumArgs } = require(join(__dirname, '../../tools/stack/browser.js'));

const BASE = SHARED_BASE;
const OUTPUT = join(__dirname, '../../.stack/test-output');
const SCREENSHOT = join(OUTPUT, 'oauth-consent.png');
const ERROR_SCREENSHOT = join(OUTPUT, 'oauth-request-error.png');
const BIDI_SCREENSHOT = join(OUTPUT, 'oauth-consent-bidi-name.png');
const PASSWORD = 'correct horse battery staple';
const REDIRECT_WAIT_MS = 10000;
const SCOPES = ['PROJECT_AUDIENCE_READ', 'PROJECT_DATASOURCE_READ'] as const;

const admin = adminApi(BASE);

/** The client's side of the redirect: records each query it receives and resolves who waits for it. */
class Receiver {
  private server!: Server;
  private waiting: Array<(query: URLSearchParams) => void> = [];
  uri = '';
  /** Requests to the callback so far: none may arrive before the user acts (OAuth 2.1 §7.12.2). */
  hits = 0;

  async start() {
    this.server = createServer((req, res) => {
      const query = new URL(req.url ?? '/', 'http://receiver').searchParams;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Received</title><p>You can close this window.</p>');
      if (req.url?.startsWith('/callback')) {
        this.hits++;
        this.waiting.shift()?.(query);
      }
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.uri = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/callback`;
  }

  next(): Promise<URLSearchParams> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  stop() {
    return new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

describe('OAuth 2.1 in a real browser (headless chromium)', () => {
  const receiver = new Receiver();
  const profile = mkdtempSync(join(tmpdir(), 'meld-chromium-'));
  const user = { email: `browser-${randomUUID().slice(0, 8)}@example.test`, password: PASSWORD };
  let context: BrowserContext;
  let project: string;
  let postgresUrl: string;

  beforeAll(async () => {
    const executablePath = await ensureChromium((line: string) => console.log(line));
    [{ postgresUrl }] = await Promise.all([sharedSystem(), receiver.start()]);
    const org = (await admin('POST', '/organizations', { name: `browser-${randomUUID().slice(0, 8)}`, plan: 's' })).entity.id;
    project = (await admin('POST', `/organizations/${org}/projects`, { name: 'Storefront' })).entity.uid!;
    await admin('POST', `/organizations/${org}/users`, user);
    context = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: chromiumArgs() });
  }, 300000);

  afterAll(async () => {
    await context?.close();
    await receiver.stop();
    rmSync(profile, { recursive: true, force: true });
  });

  /** Writes a client's name as a row registered before registration refused some characters holds it. */
  async function renameClient(clientId: string, name: string) {
    const db = new Client({ connectionString: postgresUrl });
    await db.connect();
    try {
      await db.query(`UPDATE oauth_clients SET name = $2 WHERE id = $1`, [clientId, name]);
    } finally {
      await db.end();
    }
  }

  /** Registers a client (its stored name then set to `storedName`), opens authorize in a new tab and signs in when the screen asks; returns the tab on the consent screen. */
  async function openConsent(clientName: string, storedName?: string) {
    const client = await registerOAuthClient(BASE, receiver.uri, { client_name: clientName });
    if (storedName !== undefined) await renameClient(client.client_id, storedName);
    const { verifier, challenge } = pkcePair();
    const state = randomUUID();
    const page = await context.newPage();
    await page.goto(`${BASE}/oauth/authorize?${authorizeQuery(client.client_id, receiver.uri, challenge, { scope: SCOPES.join(' '), state })}`);
    if (await page.locator('input[name=password]').count()) {
      await page.fill('input[name=email]', user.email);
      await page.fill('input[name=password]', PASSWORD);
      await Promise.all([page.waitForURL(/\/oauth\/consent\?/), page.click('button[type=submit]')]);
    }
    await page.waitForSelector('button[value=approve]');
    return { client, verifier, state, page };
  }

  /** Clicks Approve, Deny or another selector and returns what the receiver got; a redirect the browser blocks fails with its console lines. */
  async function answer(page: Page, decision: 'approve' | 'deny' | { click: string }) {
    const consoleLines: string[] = [];
    page.on('console', (m) => consoleLines.push(m.text()));
    const received = receiver.next();
    await page.click(typeof decision === 'string' ? `button[value=${decision}]` : decision.click);
    let timer: NodeJS.Timeout | undefined;
    const blocked = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the browser never reached the receiver; its console: ${consoleLines.join(' | ') || '(empty)'}`)), REDIRECT_WAIT_MS);
    });
    const query = await Promise.race([received, blocked]).finally(() => clearTimeout(timer));
    await page.waitForURL(`${receiver.uri}?**`);
    return query;
  }

  it('signs in, shows the consent screen in plain words, Approve → code at the receiver → token → GET /v1/ 200', async () => {
    const { client, verifier, state, page } = await openConsent('Browser Assistant');
    const text = await page.locator('main').innerText();
    expect(text).toContain('Browser Assistant wants to use your Meld account');
    expect(text).toContain(`It will send you back to ${new URL(receiver.uri).host}`);
    expect(text).toContain('Storefront');
    for (const scope of SCOPES) expect(text).toContain(SCOPE_DESCRIPTIONS[scope]);
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    console.log(`consent screen screenshot: ${SCREENSHOT}`);

    const back = await answer(page, 'approve');
    expect([back.get('state'), back.get('iss'), back.get('error')]).toEqual([state, BASE, null]);
    const exchanged = await tokenRequest(BASE, { grant_type: 'authorization_code', code: back.get('code')!, code_verifier: verifier, client_id: client.client_id, redirect_uri: receiver.uri });
    expect(exchanged).toMatchObject({ status: 200, body: { token_type: 'Bearer', scope: SCOPES.join(' ') } });
    const me = await fetch(`${BASE}/v1/`, { headers: { authorization: `Bearer ${exchanged.body.access_token}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ entity: { kind: 'oauth', projects: [{ uid: project }] } });
    await page.close();
  }, 60000);

  it('Deny sends the browser back with error=access_denied and no code', async () => {
    const { state, page } = await openConsent('Denied Assistant');
    const back = await answer(page, 'deny');
    expect([back.get('error'), back.get('code'), back.get('state')]).toEqual(['access_denied', null, state]);
    await page.close();
  }, 60000);

  it('a client name with a bidi override (stored before registration refused it) cannot reorder the consent screen around it', async () => {
    // Unisolated, U+202E reverses the rest of the heading: the user would read "…tnuocca dleM ruoy esu ot stnaw".
    const { page } = await openConsent('Bidi Assistant', 'Acme\u202E');
    // Where "wants" and "account" are drawn, read in the page (a string: these specs have no DOM types).
    const heading = await page.evaluate(`(() => {
      const h1 = document.querySelector('h1');
      const after = h1.lastChild;
      const left = (word) => {
        const range = document.createRange();
        range.setStart(after, after.data.indexOf(word));
        range.setEnd(after, after.data.indexOf(word) + word.length);
        return range.getBoundingClientRect().left;
      };
      return { name: h1.querySelector('strong').textContent, wantsBeforeAccount: left('wants') < left('account') };
    })()`);
    expect(heading).toEqual({ name: 'Acme\uFFFD', wantsBeforeAccount: true });
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: BIDI_SCREENSHOT, fullPage: true });
    console.log(`consent screen of a bidi name, screenshot: ${BIDI_SCREENSHOT}`);
    await page.close();
  }, 60000);

  it('an invalid scope goes nowhere before sign-in; after it the error page links back with error=invalid_scope and the state (OAuth 2.1 §7.12.2)', async () => {
    // Signed out: the earlier tests' session must not skip the sign-in this test is about.
    await context.clearCookies();
    const client = await registerOAuthClient(BASE, receiver.uri, { client_name: 'Erroneous Assistant' });
    const { challenge } = pkcePair();
    const state = randomUUID();
    const hitsBefore = receiver.hits;
    const page = await context.newPage();
    await page.goto(`${BASE}/oauth/authorize?${authorizeQuery(client.client_id, receiver.uri, challenge, { scope: 'PROJECT_AUDIENCE_READ NOT_A_SCOPE', state })}`);
    const at = new URL(page.url());
    expect(at.origin + at.pathname).toBe(`${BASE}/oauth/consent`);
    expect(await page.locator('main').innerText()).toContain(`It will send you back to ${new URL(receiver.uri).host}`);
    await page.fill('input[name=email]', user.email);
    await page.fill('input[name=password]', PASSWORD);
    await Promise.all([page.waitForURL(/\/oauth\/consent\?/), page.click('button[type=submit]')]);

    const text = await page.locator('main').innerText();
    expect(text).toContain('The request of Erroneous Assistant cannot be completed');
    expect(text).toContain('unknown scope NOT_A_SCOPE');
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: ERROR_SCREENSHOT, fullPage: true });
    console.log(`request error page screenshot: ${ERROR_SCREENSHOT}`);
    expect(receiver.hits).toBe(hitsBefore);

    const back = await answer(page, { click: `a:has-text("Return to ${new URL(receiver.uri).host}")` });
    expect([back.get('error'), back.get('error_description'), back.get('state'), back.get('iss'), back.get('code')]).toEqual(['invalid_scope', 'unknown scope NOT_A_SCOPE', state, BASE, null]);
    await page.close();
  }, 60000);
});

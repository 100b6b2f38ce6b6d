import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { type Browser, chromium } from 'playwright-core';
import { type SmsProject, seedSmsProject, smsStack, unsubscribeLink } from './support/sms-stack';

// The SMS unsubscribe page in a real browser (issue 17, ADR 0182): Debian's chromium, headless,
// driven by playwright-core, the link taken from the message as stored and opened through the
// gateway's link door (the shared e2e system, ADR 0352). A GET must record nothing (link previews fetch it); the Unsubscribe
// button records the opt-out, with JavaScript on and off (the page has no script) and with cookies blocked (ADR 0182 amended).
const { ensureChromium, chromiumArgs } = require(join(__dirname, '../../tools/stack/browser.js'));

const OUTPUT = join(__dirname, '../../.stack/test-output');
const SCREENSHOT = join(OUTPUT, 'unsubscribe.png');
const NO_COOKIES_SCREENSHOT = join(OUTPUT, 'unsubscribe-no-cookies.png');

describe('the SMS unsubscribe page in headless chromium', () => {
  let sms: Awaited<ReturnType<typeof smsStack>>;
  let p: SmsProject;
  let browser: Browser;
  let db: Client;

  beforeAll(async () => {
    const executablePath = await ensureChromium((line: string) => console.log(line));
    sms = await smsStack();
    p = await seedSmsProject(sms.base);
    db = new Client({ connectionString: sms.postgresUrl });
    await db.connect();
    browser = await chromium.launch({ executablePath, headless: true, args: chromiumArgs() });
  }, 300000);

  afterAll(async () => {
    await browser?.close();
    await db?.end();
  });

  /** What was recorded: the link's confirmation and the consent on the messaging data source's contact for this member (ADR 0181). */
  const recorded = async (link: string, userId: string) => {
    const code = link.slice(link.lastIndexOf('/') + 1);
    const [confirmed] = (await db.query(`SELECT confirmed_at FROM sms_links WHERE code = $1`, [code])).rows;
    const [consent] = (
      await db.query(
        `SELECT s.attributes->>'_consent_sms' AS status FROM source_contacts s JOIN data_sources d ON d.id = s.data_source_id AND d.uid = 'meld-messaging'
          JOIN projects p ON p.id = s.project_id WHERE p.uid = $1 AND s.user_id = $2`,
        [p.uid, userId],
      )
    ).rows;
    return { confirmed: confirmed.confirmed_at !== null, consent: (consent?.status as string | undefined) ?? null };
  };

  /** A merged contact of the CRM sent a message with an unsubscribe link; the link as stored. */
  const messageWithLink = async (userId: string, phone: string) => {
    const id = await p.contact(userId, phone);
    const sent = await p.send(id, 'Spring sale: 20% off today. Stop: {{unsubscribe}}');
    expect(sent.status).toBe(201);
    return unsubscribeLink(p, sent.body.entity.id);
  };

  it('names the sender and asks; a GET records nothing; Unsubscribe records the opt-out (screenshot kept)', async () => {
    const phone = '+447400555201';
    const link = await messageWithLink('browser-js', phone);
    const page = await (await browser.newContext()).newPage();
    expect((await page.goto(link))?.status()).toBe(200);
    const text = await page.locator('main').innerText();
    expect(text).toContain('Stop SMS from Corner Shop?');
    expect(text).toContain('You will no longer receive text messages from Corner Shop at');
    expect(text).not.toContain(phone);
    expect(await page.locator('button[type=submit]').innerText()).toBe('Unsubscribe');
    // The stylesheet came through the link door and the page's CSP let it apply.
    expect(await page.evaluate("getComputedStyle(document.querySelector('button[type=submit]')).backgroundColor")).toBe('rgb(198, 40, 40)');
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    console.log(`unsubscribe page screenshot: ${SCREENSHOT}`);

    // A second GET (a link preview, a reload) still only asks.
    await page.reload();
    await page.waitForSelector('button[type=submit]');
    expect(await recorded(link, 'browser-js')).toEqual({ confirmed: false, consent: null });

    await page.click('button[type=submit]');
    await page.locator('h1', { hasText: 'You are unsubscribed' }).waitFor();
    expect(await recorded(link, 'browser-js')).toEqual({ confirmed: true, consent: 'opt-out' });
    await p.consentBecomes(phone, 'opt-out');
    const next = await p.send(phone, 'Last chance!');
    expect([next.status, next.body.details?.reason]).toEqual([422, 'opted_out']);
    await page.context().close();
  }, 90000);

  it('with JavaScript disabled the form confirms the same way', async () => {
    const phone = '+447400555202';
    const link = await messageWithLink('browser-no-js', phone);
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(link);
    expect(await page.locator('h1').innerText()).toBe('Stop SMS from Corner Shop?');
    expect(await recorded(link, 'browser-no-js')).toEqual({ confirmed: false, consent: null });
    await page.click('button[type=submit]');
    await page.locator('h1', { hasText: 'You are unsubscribed' }).waitFor();
    expect(await recorded(link, 'browser-no-js')).toEqual({ confirmed: true, consent: 'opt-out' });
    await p.consentBecomes(phone, 'opt-out');
    await context.close();
  }, 90000);

  it('a browser that blocks cookies unsubscribes too: the link code is the capability (screenshot kept)', async () => {
    const phone = '+447400555203';
    const link = await messageWithLink('browser-no-cookies', phone);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    expect(await page.locator('h1').innerText()).toBe('Stop SMS from Corner Shop?');
    // As a browser or in-app webview that keeps no cookies: whatever the page set is gone before the click.
    await context.clearCookies();
    expect(await recorded(link, 'browser-no-cookies')).toEqual({ confirmed: false, consent: null });
    await page.click('button[type=submit]');
    await page.locator('h1', { hasText: 'You are unsubscribed' }).waitFor();
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: NO_COOKIES_SCREENSHOT, fullPage: true });
    console.log(`unsubscribe without cookies screenshot: ${NO_COOKIES_SCREENSHOT}`);
    expect(await context.cookies()).toEqual([]);
    expect(await recorded(link, 'browser-no-cookies')).toEqual({ confirmed: true, consent: 'opt-out' });
    await p.consentBecomes(phone, 'opt-out');
    await context.close();
  }, 90000);
});

import { randomBytes, randomUUID } from 'node:crypto';
import { seedTenancy, startAppUnderTest } from '@meld/fixtures';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { ConsentRepository } from '../src/consent/consent.repository';
import { OAuthRepository } from '../src/storage/oauth.repository';

/** The oauth app in-process on the test stores (or `overrides`, e.g. a proxied Postgres), ready. */
export const startOAuth = (overrides: Record<string, string> = {}) => startAppUnderTest(appDefinition, overrides);

export { pkcePair } from '@meld/fixtures';

/** A tenancy with a dashboard user (the password hash is irrelevant here: nobody signs in). */
export async function seedUser(db: DataSource) {
  const tenancy = await seedTenancy(db, 'oauth');
  const [user] = await db.query(`INSERT INTO users (organization_id, email, password_hash) VALUES ($1, $2, 'x') RETURNING id`, [tenancy.organization.id, `u-${randomUUID()}@example.test`]);
  return { ...tenancy, userId: user.id as string };
}

export async function register(base: string, body: unknown) {
  const res = await fetch(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function form(base: string, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** What the consent screen's Approve writes: a grant and its code (the screen itself is tested in consent.integration-spec.ts). */
export async function approvedCode(db: DataSource, t: Awaited<ReturnType<typeof seedUser>>, clientId: string, redirectUri: string, challenge: string, scopes = ['PROJECT_AUDIENCE_READ'], resource: string | null = null) {
  const repo = new OAuthRepository(db);
  const grantId = await repo.createGrant({ clientId, userId: t.userId, organizationId: t.organization.id, scopes, projects: [t.project.uid] }, resource);
  const code = randomBytes(32).toString('base64url');
  await repo.createCode(code, grantId, redirectUri, challenge, 60);
  return { code, grantId };
}

const HTML_ENTITIES = new Map([['&amp;', '&'], ['&quot;', '"'], ['&#39;', "'"], ['&lt;', '<'], ['&gt;', '>']]);

/** The href of the failed-request page's "Return to …" link, unescaped. */
export function returnLink(html: string): URL {
  const href = /<a class="button" href="([^"]*)">Return to /.exec(html)?.[1];
  if (href === undefined) throw new Error(`no "Return to" link in: ${html}`);
  return new URL(href.replace(/&(amp|quot|#39|lt|gt);/g, (e) => HTML_ENTITIES.get(e)!));
}

/**
 * An erroneous request of a known client as a browser meets it (ADR 0357): authorize answers the
 * same 302 to the consent screen a good request gets; without a session that screen is the
 * sign-in page, pointing nowhere else; signed in (a session opened directly: the sign-in form is
 * tested in consent.integration-spec.ts) it is a 400 page whose link is the error response. Returns
 * that link.
 */
export async function errorLinkAfterSignIn(base: string, db: DataSource, userId: string, query: string): Promise<URL> {
  const authorize = await fetch(`${base}/oauth/authorize?${query}`, { redirect: 'manual' });
  const anonymous = await fetch(`${base}/oauth/consent?${query}`, { redirect: 'manual' });
  const signInPage = await anonymous.text();
  const session = await new ConsentRepository(db).openSession(userId);
  const signedIn = await fetch(`${base}/oauth/consent?${query}`, { redirect: 'manual', headers: { cookie: `meld_oauth_session=${session}` } });
  expect([query, authorize.status, authorize.headers.get('location')]).toEqual([query, 302, `/oauth/consent?${query}`]);
  expect([query, anonymous.status, anonymous.headers.get('location'), signInPage.includes('name="password"')]).toEqual([query, 200, null, true]);
  expect([query, signedIn.status, signedIn.headers.get('location')]).toEqual([query, 400, null]);
  return returnLink(await signedIn.text());
}

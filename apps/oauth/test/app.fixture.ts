import { randomBytes, randomUUID } from 'node:crypto';
import { seedTenancy, startAppUnderTest } from '@meld/fixtures';
import type { DataSource } from 'typeorm';
import { appDefinition } from '../src/app.definition';
import { OAuthRepository } from '../src/storage/oauth.repository';

/** The oauth app in-process on the test stores, ready. */
export const startOAuth = () => startAppUnderTest(appDefinition);

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

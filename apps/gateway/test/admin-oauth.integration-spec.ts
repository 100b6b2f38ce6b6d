import { randomUUID } from 'node:crypto';
import { TOKEN_REVOKED_CHANNEL, issueToken } from '@meld/auth';
import { DATA_SOURCE } from '@meld/db';
import { testEnv } from '@meld/testing';
import Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { type AdminGateway, startAdminGateway } from './admin-support/admin-gateway';
import { UNKNOWN_ID, createOrganization, createProject, fieldsOf } from './admin-support/fixtures';

// The operator's side of OAuth: grants listed and revoked, users deleted with their tokens,
// the sensitive-scope allowance (ADR 0144). Grants and their tokens are written as the oauth
// app writes them (its code is another app's: the test writes the rows).
describe('admin: OAuth grants, users, sensitive scopes', () => {
  let gw: AdminGateway;
  let db: DataSource;
  let org: string;
  let project: string;
  let sub: Redis;
  const heard: string[] = [];

  beforeAll(async () => {
    gw = await startAdminGateway();
    db = gw.app.get(DATA_SOURCE);
    org = await createOrganization(gw);
    project = (await createProject(gw, org)).uid;
    sub = new Redis(testEnv().redisUrl);
    await sub.subscribe(TOKEN_REVOKED_CHANNEL);
    sub.on('message', (_channel, message) => heard.push(message));
  });
  afterAll(async () => {
    sub?.disconnect();
    await gw?.close();
  });

  const user = async () => {
    const res = await gw.call('POST', `/organizations/${org}/users`, { email: `u-${randomUUID()}@example.test`, password: 'long enough' });
    expect(res.status).toBe(201);
    return res.body.entity as { id: string; email: string };
  };
  /** A client, a grant and two access tokens issued from it, as the oauth app leaves them. */
  const grant = async (userId: string, clientId = `mcl_${randomUUID()}`) => {
    await db.query(`INSERT INTO oauth_clients (id, name, redirect_uris, token_endpoint_auth_method) VALUES ($1, 'Assistant', $2, 'none')`, [clientId, ['https://app.example/cb']]);
    const [g] = await db.query(`INSERT INTO oauth_grants (client_id, user_id, organization_id, scopes, projects, resource) VALUES ($1, $2, $3, $4, $5, 'https://api.example/v1') RETURNING id`, [
      clientId,
      userId,
      org,
      ['PROJECT_AUDIENCE_READ'],
      [project],
    ]);
    const tokenIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const t = issueToken('oauth');
      const [row] = await db.query(`INSERT INTO tokens (organization_id, kind, secret_hash, prefix, scopes, projects, user_id, oauth_grant_id) VALUES ($1, 'oauth', $2, $3, $4, $5, $6, $7) RETURNING id`, [
        org,
        t.secretHash,
        t.prefix,
        ['PROJECT_AUDIENCE_READ'],
        [project],
        userId,
        g.id,
      ]);
      tokenIds.push(row.id);
    }
    return { id: g.id as string, clientId, tokenIds };
  };
  const revokedAt = async (ids: string[]) => (await db.query(`SELECT revoked_at FROM tokens WHERE id = ANY($1::uuid[])`, [ids])).map((r: { revoked_at: Date | null }) => r.revoked_at);
  const heardAll = async (ids: string[]) => {
    for (let i = 0; i < 250 && !ids.every((id) => heard.includes(id)); i++) await new Promise((r) => setTimeout(r, 20));
    expect(ids.filter((id) => !heard.includes(id))).toEqual([]);
  };

  it('lists the grants of an organization with client, user, scopes, projects and resource; 404 for an unknown organization', async () => {
    const u = await user();
    const g = await grant(u.id);
    const res = await gw.call('GET', `/organizations/${org}/oauth-grants`);
    expect(res.status).toBe(200);
    expect(res.body.entity).toContainEqual({
      id: g.id,
      clientId: g.clientId,
      clientName: 'Assistant',
      userId: u.id,
      userEmail: u.email,
      scopes: ['PROJECT_AUDIENCE_READ'],
      projects: [project],
      resource: 'https://api.example/v1',
      createdAt: expect.stringMatching(/\+00:00$/),
      revokedAt: null,
    });
    expect(res.body.metadata.count).toBe(res.body.entity.length);
    expect((await gw.call('GET', `/organizations/${UNKNOWN_ID}/oauth-grants`)).status).toBe(404);
  });

  it('DELETE /oauth-grants/{id} ends the grant and every token of it, tells the gateways, and is idempotent', async () => {
    const g = await grant((await user()).id);
    expect((await gw.call('DELETE', `/oauth-grants/${g.id}`)).status).toBe(204);
    expect((await revokedAt(g.tokenIds)).every((d: Date | null) => d instanceof Date)).toBe(true);
    expect((await db.query(`SELECT revoked_at FROM oauth_grants WHERE id = $1`, [g.id]))[0].revoked_at).toBeInstanceOf(Date);
    await heardAll(g.tokenIds);
    expect((await gw.call('DELETE', `/oauth-grants/${g.id}`)).status).toBe(204);
    for (const bad of [UNKNOWN_ID, 'not-a-uuid']) expect((await gw.call('DELETE', `/oauth-grants/${bad}`)).body).toEqual({ statusCode: 404, error: 'Not Found', message: `OAuth grant "${bad}" not found` });
  });

  it('DELETE /users/{id} removes the user with their grants and tokens, and tells the gateways', async () => {
    const u = await user();
    const g = await grant(u.id);
    expect((await gw.call('DELETE', `/users/${u.id}`)).status).toBe(204);
    expect(await db.query(`SELECT id FROM tokens WHERE id = ANY($1::uuid[]) UNION ALL SELECT id FROM oauth_grants WHERE id = $2`, [g.tokenIds, g.id])).toEqual([]);
    await heardAll(g.tokenIds);
    expect((await gw.call('DELETE', `/users/${u.id}`)).status).toBe(404);
  });

  it('DELETE /oauth-clients/{id} removes the client with its grants and tokens, and tells the gateways', async () => {
    const g = await grant((await user()).id);
    expect((await gw.call('DELETE', `/oauth-clients/${encodeURIComponent(g.clientId)}`)).status).toBe(204);
    expect(await db.query(`SELECT id FROM tokens WHERE id = ANY($1::uuid[]) UNION ALL SELECT id FROM oauth_grants WHERE id = $2`, [g.tokenIds, g.id])).toEqual([]);
    await heardAll(g.tokenIds);
    expect((await gw.call('DELETE', `/oauth-clients/${encodeURIComponent(g.clientId)}`)).status).toBe(404);
  });

  it('DELETE /oauth-clients/{id} of a Client ID Metadata Document keeps it struck off: a revoked row the next fetch cannot revive (ADR 0149)', async () => {
    const clientId = `https://app.example/${randomUUID()}/client.json`;
    const g = await grant((await user()).id, clientId);
    expect((await gw.call('DELETE', `/oauth-clients/${encodeURIComponent(clientId)}`)).status).toBe(204);
    expect(await db.query(`SELECT id FROM tokens WHERE id = ANY($1::uuid[]) UNION ALL SELECT id FROM oauth_grants WHERE id = $2`, [g.tokenIds, g.id])).toEqual([]);
    await heardAll(g.tokenIds);
    // The oauth app upserts a document's client on every fetch unless its row is revoked: a deleted row would come back.
    const [row] = await db.query(`SELECT revoked_at FROM oauth_clients WHERE id = $1`, [clientId]);
    expect(row?.revoked_at).toBeInstanceOf(Date);
    expect((await gw.call('DELETE', `/oauth-clients/${encodeURIComponent(clientId)}`)).status).toBe(404);
  });

  it('PATCH /organizations/{org} sets oauthSensitiveScopes (a boolean, named when wrong)', async () => {
    expect((await gw.call('GET', `/organizations/${org}`)).body.entity.oauthSensitiveScopes).toBe(false);
    const res = await gw.call('PATCH', `/organizations/${org}`, { oauthSensitiveScopes: true });
    expect([res.status, res.body.entity.oauthSensitiveScopes]).toEqual([200, true]);
    expect((await db.query(`SELECT oauth_sensitive_scopes FROM organizations WHERE id = $1`, [org]))[0].oauth_sensitive_scopes).toBe(true);
    expect(fieldsOf((await gw.call('PATCH', `/organizations/${org}`, { oauthSensitiveScopes: 'yes' })).body)).toEqual([['oauthSensitiveScopes', expect.any(String)]]);
  });
});

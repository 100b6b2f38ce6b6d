import type { INestApplication } from '@nestjs/common';
import { InvalidGrantError } from '@node-oauth/oauth2-server';
import type { DataSource } from 'typeorm';
import { ClientDirectory } from '../src/client-metadata/client-directory';
import { OAuthModel } from '../src/protocol/oauth-model';
import { OAuthRepository } from '../src/storage/oauth.repository';
import { approvedCode, form, pkcePair, register, seedUser, startOAuth } from './app.fixture';

const REDIRECT = 'http://127.0.0.1:9/callback';

/**
 * Two exchanges of one code that overlap: both read the code before either spends it. The
 * interleaving is forced step by step through the model the token endpoint runs on.
 */
describe('oauth: a code used by two concurrent exchanges (real Postgres)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let model: OAuthModel;

  beforeAll(async () => {
    ({ app, base, db } = await startOAuth());
    model = new OAuthModel(app.get(OAuthRepository), app.get(ClientDirectory), 'none');
  });
  afterAll(() => app?.close());

  const grantRevoked = async (grantId: string) => (await db.query(`SELECT revoked_at FROM oauth_grants WHERE id = $1`, [grantId]))[0].revoked_at !== null;

  async function code() {
    const t = await seedUser(db);
    const c = (await register(base, { client_name: 'Race', redirect_uris: [REDIRECT] })).body;
    const { verifier, challenge } = pkcePair();
    return { c, verifier, ...(await approvedCode(db, t, c.client_id, REDIRECT, challenge)) };
  }

  it('the exchange that loses the race to spend the code revokes what the winner got (OAuth 2.1 §4.1.3)', async () => {
    const { c, verifier, code: value, grantId } = await code();
    const loser = await model.getAuthorizationCode(value);
    expect(loser).not.toBeNull();
    const winner = await form(base, '/oauth/token', { grant_type: 'authorization_code', client_id: c.client_id, redirect_uri: REDIRECT, code: value, code_verifier: verifier });
    expect(winner.status).toBe(200);

    expect(await model.revokeAuthorizationCode(loser!)).toBe(false);
    expect(await grantRevoked(grantId)).toBe(true);
    const rows = await db.query(`SELECT revoked_at FROM tokens WHERE oauth_grant_id = $1`, [grantId]);
    expect(rows.map((r: { revoked_at: Date | null }) => r.revoked_at !== null)).toEqual([true]);
  });

  it('tokens for a grant revoked meanwhile are refused as invalid_grant, not a server error', async () => {
    const { code: value, grantId } = await code();
    const read = await model.getAuthorizationCode(value);
    await app.get(OAuthRepository).revokeGrant(grantId);
    const token = { accessToken: 'unused', accessTokenExpiresAt: new Date(Date.now() + 3600_000), refreshTokenExpiresAt: new Date(Date.now() + 86400_000), scope: read!.scope, client: read!.client, user: read!.user };
    await expect(model.saveToken(token, read!.client, read!.user)).rejects.toBeInstanceOf(InvalidGrantError);
    expect(await db.query(`SELECT 1 FROM tokens WHERE oauth_grant_id = $1`, [grantId])).toHaveLength(0);
  });
});

import { randomBytes } from 'node:crypto';
import { hashToken, safeEqual } from '@meld/auth';
import { type AuthorizationCodeModel, type Client, InvalidGrantError, type RefreshTokenModel, type Token, type User } from '@node-oauth/oauth2-server';
import type { ClientDirectory } from '../client-metadata/client-directory';
import type { ClientRow, GrantRow, OAuthRepository } from '../storage/oauth.repository';
import { type PresentedAuthMethod, wrongAuthMethod } from './client-auth-method';

export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

/** The library's user: the grant the token chain belongs to (who, what, where). */
interface GrantUser extends User {
  id: string;
  grantId: string;
}

const asUser = (grant: GrantRow): GrantUser => ({ id: grant.userId, grantId: grant.id });
/** The grants it registered (RFC 7591 §2): the library answers unauthorized_client for another. */
const asClient = (row: ClientRow): Client => ({ id: row.id, grants: GRANT_TYPES.filter((g) => row.grantTypes.includes(g)), redirectUris: row.redirectUris });

/** Refresh tokens never reach the gateway: a shape it refuses as malformed (not `mld_(pt|ds|oa)_`). */
export const newRefreshToken = () => `mld_rt_${randomBytes(32).toString('base64url')}`;

/**
 * @node-oauth/oauth2-server's storage model on Postgres (ADR 0141, 0142). The library runs the
 * protocol (grant dispatch, PKCE check, expiry, RFC 6749 §5.2 errors); this decides what a
 * code or a refresh token is worth. A used code or a rotated refresh token presented again
 * means a copy leaked: the whole grant is revoked (OAuth 2.1 §4.3.1, §6.1). One per request:
 * `presented` is how that request authenticated its client (the library does not say).
 */
// The consent screen writes codes itself (ADR 0141): the library's authorize handler, the one
// user of saveAuthorizationCode, is not used.
export class OAuthModel implements Omit<AuthorizationCodeModel, 'saveAuthorizationCode'>, RefreshTokenModel {
  constructor(
    private readonly repo: OAuthRepository,
    private readonly clients: ClientDirectory,
    private readonly presented: PresentedAuthMethod,
  ) {}

  /** Throws `invalid_client` (401) for a client that authenticated otherwise than it registered (ADR 0142). */
  async getClient(clientId: string, clientSecret: string | null | undefined): Promise<Client | null> {
    const found = await this.clients.lookup(clientId);
    if ('problem' in found) return null;
    const row = found.client;
    if (this.presented !== row.tokenEndpointAuthMethod) throw wrongAuthMethod(row.tokenEndpointAuthMethod);
    if (row.secretHash === null) return clientSecret ? null : asClient(row);
    return clientSecret && safeEqual(hashToken(clientSecret), row.secretHash) ? asClient(row) : null;
  }

  async getAuthorizationCode(code: string) {
    const row = await this.repo.code(code);
    if (!row || row.grant.revoked) return null;
    if (row.used) {
      await this.repo.revokeGrant(row.grant.id);
      return null;
    }
    return {
      authorizationCode: code,
      expiresAt: row.expiresAt,
      // Only a URI the authorization request named must be repeated at the token endpoint (RFC 6749 §4.1.3).
      redirectUri: row.redirectUriSent ? row.redirectUri : '',
      scope: row.grant.scopes,
      codeChallenge: row.codeChallenge,
      codeChallengeMethod: 'S256',
      client: { id: row.grant.clientId, grants: [...GRANT_TYPES] },
      user: asUser(row.grant),
    };
  }

  /** Spends the code. Losing the race to a concurrent exchange of it is a reuse too (OAuth 2.1 §4.1.3, ADR 0142). */
  async revokeAuthorizationCode(code: { authorizationCode: string; user: User }): Promise<boolean> {
    if (await this.repo.consumeCode(code.authorizationCode)) return true;
    await this.repo.revokeGrant((code.user as GrantUser).grantId);
    return false;
  }

  async getRefreshToken(refreshToken: string) {
    const row = await this.repo.refreshToken(refreshToken);
    if (!row || row.grant.revoked) return null;
    if (row.rotated) {
      await this.repo.revokeGrant(row.grant.id);
      return null;
    }
    return { refreshToken, refreshTokenExpiresAt: row.expiresAt, scope: row.grant.scopes, client: { id: row.grant.clientId, grants: [...GRANT_TYPES] }, user: asUser(row.grant) };
  }

  /** Rotation: the presented refresh token is spent. Losing the race to a concurrent use is a reuse too. */
  async revokeToken(token: { refreshToken?: string; user: User }): Promise<boolean> {
    if (token.refreshToken && (await this.repo.rotateRefreshToken(token.refreshToken))) return true;
    await this.repo.revokeGrant((token.user as GrantUser).grantId);
    return false;
  }

  generateRefreshToken(): Promise<string> {
    return Promise.resolve(newRefreshToken());
  }

  async saveToken(token: Token, client: Client, user: User): Promise<Token> {
    const grantId = (user as GrantUser).grantId;
    // A client that did not register the refresh_token grant could not use one: none is issued.
    const refreshToken = client.grants.includes('refresh_token') ? (token.refreshToken ?? newRefreshToken()) : null;
    // The library has checked a refresh's `scope` against the grant's: the access token gets what
    // was asked, but for sensitive scopes the organization no longer allows (ADR 0144).
    const issued = await this.repo.issueTokens(grantId, refreshToken, token.accessTokenExpiresAt!, token.refreshTokenExpiresAt!, token.scope);
    // The grant was revoked meanwhile (a reuse detected concurrently): the library would read null as a crash (503).
    if (!issued) throw new InvalidGrantError('Invalid grant: the grant was revoked');
    const { refreshToken: _generated, refreshTokenExpiresAt: _expires, ...access } = token;
    return refreshToken === null
      ? { ...access, accessToken: issued.accessToken, scope: issued.scopes, client, user }
      : { ...token, accessToken: issued.accessToken, scope: issued.scopes, refreshToken, client, user };
  }

  // Required by the interface for bearer authentication, which the gateway does, not this app.
  getAccessToken(): Promise<null> {
    return Promise.resolve(null);
  }
}

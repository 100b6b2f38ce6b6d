import { hashToken, issueToken } from '@meld/auth';
import type { Scope } from '@meld/contracts';
import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { SENSITIVE_SCOPES } from '../consent/grantable';

export interface ClientRow {
  id: string;
  secretHash: string | null;
  name: string;
  redirectUris: string[];
  tokenEndpointAuthMethod: string;
  /** RFC 7591 `scope` of a registered client (null for none, and for metadata documents, ADR 0149). */
  scope: string | null;
  /** RFC 7591 `grant_types`: what it may use at the token endpoint (both when it named none). */
  grantTypes: string[];
}

export interface GrantRow {
  id: string;
  clientId: string;
  userId: string;
  organizationId: string;
  scopes: string[];
  projects: string[];
  revoked: boolean;
}

const GRANT_COLUMNS = `g.id, g.client_id AS "clientId", g.user_id AS "userId", g.organization_id AS "organizationId", g.scopes, g.projects, g.revoked_at IS NOT NULL AS revoked`;

/** Every OAuth read and write (raw SQL on the tables of migration 1795269500000). Secrets arrive in clear and are stored hashed. */
@Injectable()
export class OAuthRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async createClient(client: Omit<ClientRow, 'secretHash' | 'scope' | 'grantTypes'> & { secretHash: string | null; metadata: object }): Promise<void> {
    await this.ds.query(`INSERT INTO oauth_clients (id, secret_hash, name, redirect_uris, token_endpoint_auth_method, metadata) VALUES ($1, $2, $3, $4, $5, $6)`, [
      client.id,
      client.secretHash,
      client.name,
      client.redirectUris,
      client.tokenEndpointAuthMethod,
      client.metadata,
    ]);
  }

  async client(id: string): Promise<ClientRow | null> {
    const [row] = await this.ds.query(
      `SELECT id, secret_hash AS "secretHash", name, redirect_uris AS "redirectUris", token_endpoint_auth_method AS "tokenEndpointAuthMethod",
              CASE WHEN metadata->>'client_id_metadata_document' IS NULL THEN metadata->>'scope' END AS scope,
              ARRAY(SELECT jsonb_array_elements_text(COALESCE(metadata->'grant_types', '["authorization_code", "refresh_token"]'::jsonb))) AS "grantTypes"
         FROM oauth_clients WHERE id = $1 AND revoked_at IS NULL`,
      [id],
    );
    return row ?? null;
  }

  /** The client of a Client ID Metadata Document as a row (ADR 0149), refreshed from each fetch unless the operator revoked it. */
  async saveDocumentClient(id: string, doc: { name: string; redirectUris: string[]; metadata: object }): Promise<void> {
    await this.ds.query(
      `INSERT INTO oauth_clients (id, secret_hash, name, redirect_uris, token_endpoint_auth_method, metadata) VALUES ($1, NULL, $2, $3, 'none', $4)
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, redirect_uris = EXCLUDED.redirect_uris, metadata = EXCLUDED.metadata WHERE oauth_clients.revoked_at IS NULL`,
      [id, doc.name, doc.redirectUris, doc.metadata],
    );
  }

  async createGrant(grant: Omit<GrantRow, 'id' | 'revoked'>, resource: string | null): Promise<string> {
    const [row] = await this.ds.query(`INSERT INTO oauth_grants (client_id, user_id, organization_id, scopes, projects, resource) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, [
      grant.clientId,
      grant.userId,
      grant.organizationId,
      grant.scopes,
      grant.projects,
      resource,
    ]);
    return row.id;
  }

  /** `redirectUriSent`: the authorization request named the URI (false: the client's only one was taken). */
  async createCode(code: string, grantId: string, redirectUri: string, codeChallenge: string, seconds: number, redirectUriSent = true): Promise<void> {
    await this.ds.query(
      `INSERT INTO oauth_codes (code_hash, grant_id, redirect_uri, code_challenge, expires_at, redirect_uri_sent) VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5), $6)`,
      [hashToken(code), grantId, redirectUri, codeChallenge, seconds, redirectUriSent],
    );
  }

  async code(code: string): Promise<{ grant: GrantRow; redirectUri: string; redirectUriSent: boolean; codeChallenge: string; expiresAt: Date; used: boolean } | null> {
    const [row] = await this.ds.query(
      `SELECT ${GRANT_COLUMNS}, c.redirect_uri AS "redirectUri", c.redirect_uri_sent AS "redirectUriSent", c.code_challenge AS "codeChallenge", c.expires_at AS "expiresAt", c.used_at IS NOT NULL AS used
         FROM oauth_codes c JOIN oauth_grants g ON g.id = c.grant_id WHERE c.code_hash = $1`,
      [hashToken(code)],
    );
    if (!row) return null;
    const { redirectUri, redirectUriSent, codeChallenge, expiresAt, used, ...grant } = row;
    return { grant, redirectUri, redirectUriSent, codeChallenge, expiresAt, used };
  }

  /** True for the one caller that consumes the code; a code is good once. */
  async consumeCode(code: string): Promise<boolean> {
    const res = await this.ds.query(`UPDATE oauth_codes SET used_at = now() WHERE code_hash = $1 AND used_at IS NULL`, [hashToken(code)]);
    return res[1] === 1;
  }

  async refreshToken(token: string): Promise<{ grant: GrantRow; expiresAt: Date; rotated: boolean } | null> {
    const [row] = await this.ds.query(
      `SELECT ${GRANT_COLUMNS}, r.expires_at AS "expiresAt", r.rotated_at IS NOT NULL AS rotated
         FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id WHERE r.token_hash = $1`,
      [hashToken(token)],
    );
    if (!row) return null;
    const { expiresAt, rotated, ...grant } = row;
    return { grant, expiresAt, rotated };
  }

  /** True for the one caller that rotates the token. */
  async rotateRefreshToken(token: string): Promise<boolean> {
    const res = await this.ds.query(`UPDATE oauth_refresh_tokens SET rotated_at = now() WHERE token_hash = $1 AND rotated_at IS NULL`, [hashToken(token)]);
    return res[1] === 1;
  }

  async grant(id: string): Promise<GrantRow | null> {
    const [row] = await this.ds.query(`SELECT ${GRANT_COLUMNS} FROM oauth_grants g WHERE g.id = $1`, [id]);
    return row ?? null;
  }

  /**
   * The access token as a row of `tokens` (kind 'oauth': the gateway's own lookup, same cost
   * as a product token) and its refresh token (null: the client registered no refresh_token
   * grant), in one transaction, unless the grant was
   * revoked meanwhile (then null: a reuse detected concurrently wins). `scopes` narrows the
   * access token to those of the grant's scopes (a refresh asking for fewer, RFC 6749 §6); the
   * refresh token stays worth the whole grant. The sensitive scopes are left out while the
   * organization's allowance is withdrawn (ADR 0144). Answers the scopes the token got.
   */
  async issueTokens(
    grantId: string,
    refreshToken: string | null,
    accessExpiresAt: Date,
    refreshExpiresAt: Date,
    scopes?: readonly string[],
  ): Promise<{ accessToken: string; scopes: string[] } | null> {
    const access = issueToken('oauth');
    return this.ds.transaction(async (em: EntityManager) => {
      const [grant] = await em.query(
        `SELECT g.organization_id, g.user_id, g.client_id, g.scopes, g.projects, g.resource, o.oauth_sensitive_scopes AS sensitive_allowed
           FROM oauth_grants g JOIN organizations o ON o.id = g.organization_id WHERE g.id = $1 AND g.revoked_at IS NULL FOR SHARE OF g`,
        [grantId],
      );
      if (!grant) return null;
      const granted = (grant.scopes as string[]).filter((s) => (!scopes || scopes.includes(s)) && (grant.sensitive_allowed || !SENSITIVE_SCOPES.includes(s as Scope)));
      await em.query(
        `INSERT INTO tokens (organization_id, kind, secret_hash, prefix, scopes, projects, user_id, label, expires_at, oauth_grant_id, resource) VALUES ($1, 'oauth', $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [grant.organization_id, access.secretHash, access.prefix, granted, grant.projects, grant.user_id, `oauth:${grant.client_id}`, accessExpiresAt, grantId, grant.resource],
      );
      if (refreshToken !== null) await em.query(`INSERT INTO oauth_refresh_tokens (token_hash, grant_id, expires_at) VALUES ($1, $2, $3)`, [hashToken(refreshToken), grantId, refreshExpiresAt]);
      return { accessToken: access.token, scopes: granted };
    });
  }

  /** Ends a grant and every access token issued from it (the gateway stops accepting them within its cache TTL). */
  async revokeGrant(grantId: string): Promise<void> {
    await this.ds.transaction(async (em: EntityManager) => {
      await em.query(`UPDATE oauth_grants SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [grantId]);
      await em.query(`UPDATE tokens SET revoked_at = now() WHERE oauth_grant_id = $1 AND revoked_at IS NULL`, [grantId]);
    });
  }

  /** The client's access token with this secret, if any. */
  async accessTokenGrant(token: string, clientId: string): Promise<{ tokenId: string } | null> {
    const [row] = await this.ds.query(
      `SELECT t.id FROM tokens t JOIN oauth_grants g ON g.id = t.oauth_grant_id WHERE t.secret_hash = $1 AND t.kind = 'oauth' AND g.client_id = $2`,
      [hashToken(token), clientId],
    );
    return row ? { tokenId: row.id } : null;
  }

  async revokeAccessToken(tokenId: string): Promise<void> {
    await this.ds.query(`UPDATE tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [tokenId]);
  }
}

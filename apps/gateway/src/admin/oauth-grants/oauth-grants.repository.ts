import { DATA_SOURCE, isUuid } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';

export interface OAuthGrantRow {
  id: string;
  clientId: string;
  clientName: string;
  userId: string;
  userEmail: string;
  scopes: string[];
  projects: string[];
  resource: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

/** A client_id that is the URL of its Client ID Metadata Document (ADR 0149), not a registered `mcl_` id. */
const METADATA_DOCUMENT_ID = /^https?:\/\//i;

/** The oauth app's grants as the operator sees them (tables of migration 1795269500000, ADR 0142). */
@Injectable()
export class OAuthGrantsRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  listByOrganization(organizationId: string): Promise<OAuthGrantRow[]> {
    return this.ds.query(
      `SELECT g.id, g.client_id AS "clientId", c.name AS "clientName", g.user_id AS "userId", u.email AS "userEmail", g.scopes, g.projects, g.resource,
              g.created_at AS "createdAt", g.revoked_at AS "revokedAt"
         FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id JOIN users u ON u.id = g.user_id
        WHERE g.organization_id = $1 ORDER BY g.created_at, g.id`,
      [organizationId],
    );
  }

  /**
   * Ends the grant (its refresh tokens die with it) and every access token issued from it;
   * returns the ids of those tokens, or null when there is no such grant. Idempotent.
   */
  async revoke(grantId: string): Promise<string[] | null> {
    if (!isUuid(grantId)) return null;
    return this.ds.transaction(async (em: EntityManager) => {
      // TypeORM answers an UPDATE … RETURNING with [rows, affected].
      const [grants] = await em.query(`UPDATE oauth_grants SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING id`, [grantId]);
      if (grants.length === 0) return null;
      const [tokens]: [Array<{ id: string }>] = await em.query(`UPDATE tokens SET revoked_at = COALESCE(revoked_at, now()) WHERE oauth_grant_id = $1 RETURNING id`, [grantId]);
      return tokens.map((t) => t.id);
    });
  }

  /**
   * Deletes a client with its grants, codes and refresh tokens (foreign keys cascade) and the
   * access tokens issued from them; answers those tokens' ids for the gateways, or null when
   * there is no such client (or a document client already struck off).
   */
  async deleteClient(clientId: string): Promise<string[] | null> {
    return this.ds.transaction(async (em: EntityManager) => {
      const tokens: Array<{ id: string }> = await em.query(`SELECT t.id FROM tokens t JOIN oauth_grants g ON g.id = t.oauth_grant_id WHERE g.client_id = $1`, [clientId]);
      if (METADATA_DOCUMENT_ID.test(clientId)) {
        // The oauth app would re-create a deleted document client on its next use: it stays as a
        // revoked row, which the app neither serves nor refreshes (ADR 0149); its grants go.
        const [struck] = await em.query(`UPDATE oauth_clients SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id`, [clientId]);
        if (struck.length === 0) return null;
        await em.query(`DELETE FROM oauth_grants WHERE client_id = $1`, [clientId]);
        return tokens.map((t) => t.id);
      }
      // TypeORM answers a DELETE … RETURNING with [rows, affected].
      const [deleted] = await em.query(`DELETE FROM oauth_clients WHERE id = $1 RETURNING id`, [clientId]);
      return deleted.length ? tokens.map((t) => t.id) : null;
    });
  }
}

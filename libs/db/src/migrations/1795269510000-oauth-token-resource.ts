import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The RFC 8707 resource an OAuth access token was issued for, copied from its grant, so the
 * gateway refuses a token meant for another API with the same one lookup (ADR 0146). NULL:
 * the client named no resource (this API is the only one), and every product token.
 * The grant foreign key gets the `fk_` name the schema check knows (entities declare no relation).
 */
export class OAuthTokenResource1795269510000 implements MigrationInterface {
  name = 'OAuthTokenResource1795269510000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "tokens" ADD COLUMN "resource" text`);
    await q.query(`ALTER TABLE "tokens" RENAME CONSTRAINT "tokens_oauth_grant_id_fkey" TO "fk_tokens_oauth_grant"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "tokens" RENAME CONSTRAINT "fk_tokens_oauth_grant" TO "tokens_oauth_grant_id_fkey"`);
    await q.query(`ALTER TABLE "tokens" DROP COLUMN "resource"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The RFC 8707 resource an OAuth access token was issued for, copied from its grant, so the
 * gateway refuses a token meant for another API with the same one lookup (ADR 0146). NULL:
 * the client named no resource (this API is the only one), and every product token.
 */
export class OAuthTokenResource1795269510000 implements MigrationInterface {
  name = 'OAuthTokenResource1795269510000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "tokens" ADD COLUMN "resource" text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "tokens" DROP COLUMN "resource"`);
  }
}

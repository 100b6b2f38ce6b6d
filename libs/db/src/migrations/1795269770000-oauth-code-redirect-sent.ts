import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Whether the authorization request named its `redirect_uri` (RFC 6749 §4.1.3, OAuth 2.1
 * §4.1.3): only then must the token request repeat it. A client with one registered URI may
 * leave it out at authorize (ADR 0142); its code stores that URI for the redirect, with
 * `redirect_uri_sent` false. Codes issued before it (they live a minute) keep the strict check.
 */
export class OAuthCodeRedirectSent1795269770000 implements MigrationInterface {
  name = 'OAuthCodeRedirectSent1795269770000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "oauth_codes" ADD COLUMN "redirect_uri_sent" boolean NOT NULL DEFAULT true`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "oauth_codes" DROP COLUMN "redirect_uri_sent"`);
  }
}

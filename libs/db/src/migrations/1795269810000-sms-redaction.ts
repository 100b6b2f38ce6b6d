import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Redaction of a deleted audience contact's SMS (ADR 0358): `redacted_at` is when its number was
 * masked and its text dropped (`text` becomes NULL; no other writer leaves it NULL), and a short
 * link of a redacted message loses its target (`url` NULL). Dropping NOT NULL rewrites nothing; the
 * links' check is added NOT VALID and validated apart, so sends are not blocked while it scans.
 */
export class SmsRedaction1795269810000 implements MigrationInterface {
  name = 'SmsRedaction1795269810000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sms_messages" ADD COLUMN "redacted_at" TIMESTAMP WITH TIME ZONE`);
    await q.query(`ALTER TABLE "sms_messages" ALTER COLUMN "text" DROP NOT NULL`);
    await q.query(`ALTER TABLE "sms_links" DROP CONSTRAINT "CHK_sms_links_url"`);
    await q.query(`ALTER TABLE "sms_links" ADD CONSTRAINT "CHK_sms_links_url" CHECK ("kind" = 'short' OR "url" IS NULL) NOT VALID`);
    await q.query(`ALTER TABLE "sms_links" VALIDATE CONSTRAINT "CHK_sms_links_url"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sms_links" DROP CONSTRAINT "CHK_sms_links_url"`);
    await q.query(`ALTER TABLE "sms_links" ADD CONSTRAINT "CHK_sms_links_url" CHECK (("kind" = 'short') = ("url" IS NOT NULL))`);
    await q.query(`ALTER TABLE "sms_messages" ALTER COLUMN "text" SET NOT NULL`);
    await q.query(`ALTER TABLE "sms_messages" DROP COLUMN "redacted_at"`);
  }
}

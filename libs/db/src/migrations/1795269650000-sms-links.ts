import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Links inside direct SMS (issue 17, ADR 0182): `{{short:URL}}` short links and the
 * `{{unsubscribe}}` opt-out link of one message, by their code. Only the messaging app
 * writes them, with SQL. `clicks` counts redirects of a short link; `confirmed_at` is when
 * the unsubscribe page's form was posted (a GET never sets it).
 */
export class SmsLinks1795269650000 implements MigrationInterface {
  name = 'SmsLinks1795269650000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "sms_links" (
      "code" text NOT NULL,
      "kind" text NOT NULL,
      "project_id" uuid NOT NULL,
      "sms_id" uuid NOT NULL,
      "url" text,
      "clicks" integer NOT NULL DEFAULT 0,
      "confirmed_at" TIMESTAMP WITH TIME ZONE,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_sms_links" PRIMARY KEY ("code"),
      CONSTRAINT "CHK_sms_links_kind" CHECK ("kind" IN ('short', 'unsubscribe')),
      CONSTRAINT "CHK_sms_links_url" CHECK (("kind" = 'short') = ("url" IS NOT NULL)))`);
    await q.query(`CREATE INDEX "IDX_sms_links_sms" ON "sms_links" ("sms_id")`);
    await q.query(`ALTER TABLE "sms_links" ADD CONSTRAINT "fk_sms_links_sms_id" FOREIGN KEY ("sms_id") REFERENCES "sms_messages"("id") ON DELETE CASCADE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS "sms_links"`);
  }
}

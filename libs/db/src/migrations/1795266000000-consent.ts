import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Consent history (ADR 0049): one row per change of an audience contact's merged consent on a
 * channel, written by identity-merge in the merge step's transaction (later also by the
 * unsubscribe link and inbound keywords). Append-only, no entity (SQL from the repository,
 * like the other audience tables). `status` / `previous` null = no consent statement.
 * `source`: `datasource:<id>` (the data source whose value won), later `unsubscribe`, `keyword`.
 * `changed_at`: when the audience contact's consent changed (the merge step);
 * `source_at`: when the source recorded the statement (the ingest write or event date), if known.
 */
export class Consent1795266000000 implements MigrationInterface {
  name = 'Consent1795266000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "consent_changes" (
      "id" bigserial NOT NULL,
      "project_id" uuid NOT NULL,
      "audience_id" uuid NOT NULL,
      "channel" text NOT NULL,
      "status" text,
      "previous" text,
      "source" text NOT NULL,
      "source_at" TIMESTAMP WITH TIME ZONE,
      "changed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_consent_changes" PRIMARY KEY ("id"),
      CONSTRAINT "CHK_consent_changes_channel" CHECK ("channel" IN ('sms', 'email', 'rcs', 'whatsapp')),
      CONSTRAINT "CHK_consent_changes_status" CHECK ("status" IN ('opt-in', 'opt-out')),
      CONSTRAINT "CHK_consent_changes_previous" CHECK ("previous" IN ('opt-in', 'opt-out')))`);
    // History of one contact (newest first), and per project for audits.
    await q.query(`CREATE INDEX "IDX_consent_changes_contact" ON "consent_changes" ("project_id", "audience_id", "channel", "changed_at")`);
    await q.query(`ALTER TABLE "consent_changes" ADD CONSTRAINT "fk_consent_changes_project_id" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS "consent_changes"`);
  }
}

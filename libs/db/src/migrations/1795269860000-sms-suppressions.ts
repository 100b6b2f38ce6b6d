import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The SMS suppression list (ADR 0361): per project and E.164 number, a destination the direct
 * send refuses whatever the consent. `invalid_destination` rows are written by the status writer
 * when the SMSC answers a submit with a permanent destination error (`created_by` `automatic`,
 * `detail` the SMPP command_status); `manual` ones by the operator's admin API (`admin`).
 * Lifting deletes the row: no history is kept here (the contact's timeline has the events).
 */
export class SmsSuppressions1795269860000 implements MigrationInterface {
  name = 'SmsSuppressions1795269860000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE "sms_suppressions" (
        "project_id" uuid NOT NULL,
        "phone" text NOT NULL,
        "reason" text NOT NULL,
        "detail" text,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "created_by" text NOT NULL,
        CONSTRAINT "PK_sms_suppressions" PRIMARY KEY ("project_id", "phone"),
        CONSTRAINT "CHK_sms_suppressions_reason" CHECK ("reason" IN ('invalid_destination', 'manual')),
        CONSTRAINT "CHK_sms_suppressions_created_by" CHECK ("created_by" IN ('automatic', 'admin')),
        CONSTRAINT "fk_sms_suppressions_project_id" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE
      )`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "sms_suppressions"`);
  }
}

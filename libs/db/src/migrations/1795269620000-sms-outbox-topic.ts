import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The SMS outbox carries two topics (ADR 0157): the status changes of `meld.sms-status.v1`
 * and their timeline events on `meld.events.v1`, written in the status change's transaction
 * and drained in id order by the one pump. Rows written before this migration are status
 * changes.
 */
export class SmsOutboxTopic1795269620000 implements MigrationInterface {
  name = 'SmsOutboxTopic1795269620000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sms_outbox" ADD COLUMN "topic" text NOT NULL DEFAULT 'meld.sms-status.v1'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sms_outbox" DROP COLUMN "topic"`);
  }
}

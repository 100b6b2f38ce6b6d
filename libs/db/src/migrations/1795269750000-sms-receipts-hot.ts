import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A receipt's update of its message can be HOT (ADR 0325). `status` left the last index that
 * read it: the recovery sweep's partial index now selects the messages not yet handed to the
 * SMSC by columns a receipt never changes (no SMSC id, no error: `sent` sets the one, `failed`
 * and `rejected` the other), and a sixth of each page is kept for the `delivered` version of
 * its rows. Built and dropped CONCURRENTLY, outside a transaction, so sends go on meanwhile; a
 * half-built index left by an interrupted run is dropped first. Pages already full keep their
 * fill until rewritten.
 */
export class SmsReceiptsHot1795269750000 implements MigrationInterface {
  name = 'SmsReceiptsHot1795269750000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS "IDX_sms_messages_unsubmitted"`);
    await q.query(`CREATE INDEX CONCURRENTLY "IDX_sms_messages_unsubmitted" ON "sms_messages" ("created_at") WHERE "smsc_message_id" IS NULL AND "error" IS NULL`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS "IDX_sms_messages_enqueued"`);
    await q.query(`ALTER TABLE "sms_messages" SET (fillfactor = 85)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sms_messages" RESET (fillfactor)`);
    await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS "IDX_sms_messages_enqueued" ON "sms_messages" ("created_at") WHERE "status" = 'enqueued'`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS "IDX_sms_messages_unsubmitted"`);
  }
}

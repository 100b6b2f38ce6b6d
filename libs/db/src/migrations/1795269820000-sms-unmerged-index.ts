import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The messages of an auto-created contact not merged yet (no audience id, ADR 0184), by number: a
 * snapshot of its `meld-messaging` member gives them its id, a tombstone redacts them (ADR 0358).
 * Only such messages enter the index and they leave it once they have their id. Neither column
 * changes with a receipt, whose update stays HOT (ADR 0325). Built CONCURRENTLY, outside a
 * transaction, so sends go on meanwhile; a half-built index left by an interrupted run is dropped first.
 */
export class SmsUnmergedIndex1795269820000 implements MigrationInterface {
  name = 'SmsUnmergedIndex1795269820000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS "IDX_sms_messages_unmerged"`);
    await q.query(`CREATE INDEX CONCURRENTLY "IDX_sms_messages_unmerged" ON "sms_messages" ("project_id", "destination") WHERE "audience_id" IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS "IDX_sms_messages_unmerged"`);
  }
}

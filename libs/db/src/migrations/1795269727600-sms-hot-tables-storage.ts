import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Storage settings of the direct SMS path's hottest tables (ADR 0276). `webhook_deliveries`
 * keeps a quarter of each page free, so the lease a claim writes (`locked_until`, no index
 * reads it) is a HOT update on the row's own page instead of a new entry in each of its four
 * indexes; its pending rows are the queue of ADR 0252, so dead versions are vacuumed and the
 * statistics refreshed after 2 % of the table changed rather than 20 % (delivered rows are
 * kept 7 days: the default would let a week's fifth go dead under the claim's index scan).
 * `sms_messages` gets its statistics refreshed as often, so plans follow its growth.
 */
export class SmsHotTablesStorage1795269727600 implements MigrationInterface {
  name = 'SmsHotTablesStorage1795269727600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "webhook_deliveries" SET (fillfactor = 75, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02)`);
    await q.query(`ALTER TABLE "sms_messages" SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.02)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "webhook_deliveries" RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor)`);
    await q.query(`ALTER TABLE "sms_messages" RESET (autovacuum_vacuum_scale_factor, autovacuum_analyze_scale_factor)`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = ['outbox', 'audience_outbox', 'sms_outbox'];

/**
 * Every committed write to an outbox wakes the pumps of its table (ADR 0212): one notification
 * per INSERT statement on channel `meld_outbox`, the table's name as payload. Postgres delivers
 * it at COMMIT (never for a rolled-back write) and folds the repeats of one transaction into one.
 */
export class OutboxNotify1795269721100 implements MigrationInterface {
  name = 'OutboxNotify1795269721100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE FUNCTION meld_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('meld_outbox', TG_TABLE_NAME);
        RETURN NULL;
      END $$`);
    for (const t of TABLES) {
      await q.query(`CREATE TRIGGER "${t}_notify" AFTER INSERT ON "${t}" FOR EACH STATEMENT EXECUTE FUNCTION meld_outbox_notify()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of TABLES) await q.query(`DROP TRIGGER IF EXISTS "${t}_notify" ON "${t}"`);
    await q.query(`DROP FUNCTION IF EXISTS meld_outbox_notify()`);
  }
}

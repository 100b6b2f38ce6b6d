import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The reserved attributes `_suppressed_<channel>` (boolean, internal: only the messaging app
 * writes them, ADR 0361) join the catalogue of every project created before they were reserved,
 * as project creation seeds them now, so audience filters and catalogue listings know them. Each
 * gets the next free `num` slot of its project (the slot trigger, ADR 0064): no contact holds a
 * value yet, so no row in ClickHouse misses its column.
 */
export class ReservedSuppressionAttributes1795269880000 implements MigrationInterface {
  name = 'ReservedSuppressionAttributes1795269880000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `INSERT INTO attributes (project_id, uid, label, type, multivalue, enabled, visible, internal, "unique", reserved)
       SELECT p.id, r.uid, r.label, 'boolean', false, true, true, true, false, true
         FROM projects p
        CROSS JOIN (VALUES (1, '_suppressed_sms', 'SMS suppressed'), (2, '_suppressed_email', 'Email suppressed'), (3, '_suppressed_rcs', 'RCS suppressed'),
                           (4, '_suppressed_whatsapp', 'WhatsApp suppressed')) AS r(n, uid, label)
        WHERE NOT EXISTS (SELECT 1 FROM attributes a WHERE a.project_id = p.id AND a.uid = r.uid)
        ORDER BY p.id, r.n`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM attributes WHERE reserved AND uid IN ('_suppressed_sms', '_suppressed_email', '_suppressed_rcs', '_suppressed_whatsapp')`);
  }
}

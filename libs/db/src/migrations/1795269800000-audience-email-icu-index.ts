import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audience email index lowers with ICU's root collation (`und-x-icu`), as the list query's
 * case-insensitive operators do (ADR 0055): plain `lower()` follows the database's LC_CTYPE, and
 * under `C` it lowers A-Z only, so `ÉLODIE@…` was indexed unlike `élodie@…` (ADR 0046). Built and
 * dropped CONCURRENTLY, outside a transaction, so contact writes go on meanwhile; a half-built
 * index left by an interrupted run is dropped first.
 */
export class AudienceEmailIcuIndex1795269800000 implements MigrationInterface {
  name = 'AudienceEmailIcuIndex1795269800000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS "IDX_audience_contacts_email_icu"`);
    await q.query(`CREATE INDEX CONCURRENTLY "IDX_audience_contacts_email_icu" ON "audience_contacts" ("project_id", lower(("attributes"->>'_email') COLLATE "und-x-icu"))`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS "IDX_audience_contacts_email"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS "IDX_audience_contacts_email" ON "audience_contacts" ("project_id", lower("attributes"->>'_email'))`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS "IDX_audience_contacts_email_icu"`);
  }
}

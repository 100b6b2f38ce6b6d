import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `source_contacts.live_since`: the version at which the contact's current life began (its
 * creation, or its re-creation after a delete); 0 for a row of before this column. The merge reads
 * it against the member row's applied version: a member row applied before it belongs to a life
 * the contact lost to a delete the merge never saw (written again before its step ran), and the
 * contact must come back as a new one (ADR 0027). Kept by a trigger, so every write path (ingest,
 * the messaging app's data source) keeps it; its WHEN clause runs no function for ordinary updates.
 */
export class SourceContactLiveSince1795269870000 implements MigrationInterface {
  name = 'SourceContactLiveSince1795269870000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "source_contacts" ADD COLUMN "live_since" bigint NOT NULL DEFAULT 0`);
    await q.query(`CREATE FUNCTION meld_source_contact_live_since() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.live_since := NEW.version;
        RETURN NEW;
      END $$`);
    // Created (version 0 is the row a write inserts before it locks it) or re-created after a delete.
    await q.query(
      `CREATE TRIGGER "source_contacts_live_since" BEFORE UPDATE ON "source_contacts" FOR EACH ROW
        WHEN (NEW.deleted_at IS NULL AND (OLD.deleted_at IS NOT NULL OR OLD.version = 0) AND NEW.version > OLD.version)
        EXECUTE FUNCTION meld_source_contact_live_since()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS "source_contacts_live_since" ON "source_contacts"`);
    await q.query(`DROP FUNCTION IF EXISTS meld_source_contact_live_since()`);
    await q.query(`ALTER TABLE "source_contacts" DROP COLUMN IF EXISTS "live_since"`);
  }
}

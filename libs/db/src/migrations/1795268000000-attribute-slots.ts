import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Attribute slots: a project attribute's own column in ClickHouse `audience_contacts`
 * (`s<slot>` for string, email and phone; `n<slot>` for number, boolean, date and datetime;
 * ClickHouse migration 0005). A count then reads one narrow column per condition instead of a
 * contact's whole key/value arrays (ADR 0064).
 *
 * The slot is given by a trigger, so every path that creates an attribute (ingest's first
 * write, the catalogue admin, project seeding) gets one the same way: the next free slot of the
 * project for the attribute's kind, under a per-project advisory lock (attribute creation is
 * rare, so the serialisation costs nothing); NULL for a multivalue attribute and once the
 * kind's slots are used up (those are filtered from the arrays, which stay complete).
 * Attributes are never deleted and never change type, so a slot never changes meaning.
 *
 * 32 slots per kind, as many as migration 0005 adds columns (ATTRIBUTE_SLOTS in @meld/contracts;
 * apps/probes/test/attribute-slots.integration-spec.ts checks they agree).
 *
 * Attributes that exist before this migration keep slot NULL: their values already in ClickHouse
 * have no slot column, and the arrays answer for them as before.
 */
export class AttributeSlots1795268000000 implements MigrationInterface {
  name = 'AttributeSlots1795268000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "attributes" ADD COLUMN "slot" smallint`);
    await q.query(`CREATE FUNCTION meld_attribute_slot_kind(attribute_type text) RETURNS text IMMUTABLE LANGUAGE sql AS
      $$ SELECT CASE WHEN attribute_type IN ('string', 'email', 'phone') THEN 'str' ELSE 'num' END $$`);
    await q.query(`CREATE UNIQUE INDEX "UQ_attributes_slot" ON "attributes" ("project_id", meld_attribute_slot_kind("type"), "slot") WHERE "slot" IS NOT NULL`);
    await q.query(`CREATE FUNCTION meld_assign_attribute_slot() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE next_slot integer;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('meld.attribute-slots'), hashtext(NEW.project_id::text));
        SELECT coalesce(max(slot) + 1, 0) INTO next_slot FROM attributes
         WHERE project_id = NEW.project_id AND meld_attribute_slot_kind(type) = meld_attribute_slot_kind(NEW.type);
        NEW.slot := CASE WHEN next_slot < 32 AND NOT NEW.multivalue THEN next_slot END;
        RETURN NEW;
      END $$`);
    await q.query(`CREATE TRIGGER "attributes_slot" BEFORE INSERT ON "attributes" FOR EACH ROW EXECUTE FUNCTION meld_assign_attribute_slot()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS "attributes_slot" ON "attributes"`);
    await q.query(`DROP FUNCTION IF EXISTS meld_assign_attribute_slot()`);
    await q.query(`DROP INDEX IF EXISTS "UQ_attributes_slot"`);
    await q.query(`DROP FUNCTION IF EXISTS meld_attribute_slot_kind(text)`);
    await q.query(`ALTER TABLE "attributes" DROP COLUMN IF EXISTS "slot"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A merge key value over 1,024 UTF-8 bytes is keyed by its SHA-256 (`sha256:<hex>`,
 * identity-merge's MAX_KEY_BYTES, ADR 0024): the rows already holding such a value take the same
 * form, so a contact written later with the value finds them. Rows of 2,704 bytes or more never
 * made it into the table (the btree limit that made their steps fail).
 */
export class MergeKeysLongValues1795269830000 implements MigrationInterface {
  name = 'MergeKeysLongValues1795269830000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE "merge_keys" SET "value" = 'sha256:' || encode(sha256(convert_to("value", 'UTF8')), 'hex') WHERE octet_length("value") > 1024`);
  }

  async down(): Promise<void> {
    // A digest cannot be turned back into its value; the next step of each contact rewrites its keys anyway.
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Data sources get a readable uid, unique in their project: coverage and the operator
 * address a data source by uid as well as by id. Existing rows get `ds-<8 hex of the id>`.
 */
export class DataSourceUid1795263100000 implements MigrationInterface {
  name = 'DataSourceUid1795263100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "data_sources" ADD "uid" text`);
    await q.query(`UPDATE "data_sources" SET "uid" = 'ds-' || left(replace("id"::text, '-', ''), 8)`);
    await q.query(`ALTER TABLE "data_sources" ALTER COLUMN "uid" SET NOT NULL`);
    await q.query(`CREATE UNIQUE INDEX "IDX_05f47e085f596a119af988dbc4" ON "data_sources"  ("project_id", "uid")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS "IDX_05f47e085f596a119af988dbc4"`);
    await q.query(`ALTER TABLE "data_sources" DROP COLUMN IF EXISTS "uid"`);
  }
}

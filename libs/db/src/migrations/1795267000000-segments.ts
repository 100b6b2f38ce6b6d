import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Segments: saved audience filters of a project (`filter` = {version, root}, checked against
 * the catalogue when written). No entity: the audience app reads and writes them with SQL
 * through the list query filter. Names are labels, not keys (segments are addressed by id),
 * so they need not be unique.
 */
export class Segments1795267000000 implements MigrationInterface {
  name = 'Segments1795267000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "segments" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(),
      "project_id" uuid NOT NULL,
      "name" text NOT NULL,
      "description" text,
      "filter" jsonb NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_segments" PRIMARY KEY ("id"))`);
    // Listings are per project, oldest first by default.
    await q.query(`CREATE INDEX "IDX_segments_project" ON "segments" ("project_id", "created_at")`);
    await q.query(`ALTER TABLE "segments" ADD CONSTRAINT "fk_segments_project_id" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS "segments" CASCADE`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A change of a project's merging attributes asks identity-merge to merge its source contacts
 * again (ADR 0331): one row per project, written with the change. `requested_at` names the
 * request (a newer change restarts it), the cursor is the last source contact merged again
 * (primary-key order, so a restarted worker goes on), `lease_until` keeps two replicas from
 * working on one project at once, `done_at` ends it.
 */
export class RemergeRequests1795269760000 implements MigrationInterface {
  name = 'RemergeRequests1795269760000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "remerge_requests" (
      "project_id" uuid NOT NULL REFERENCES "projects" ("id") ON DELETE CASCADE,
      "requested_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      "cursor_data_source_id" uuid,
      "cursor_user_id" text,
      "contacts_done" bigint NOT NULL DEFAULT 0,
      "lease_until" TIMESTAMP WITH TIME ZONE,
      "done_at" TIMESTAMP WITH TIME ZONE,
      CONSTRAINT "PK_remerge_requests" PRIMARY KEY ("project_id"))`);
    await q.query(`CREATE INDEX "IDX_remerge_requests_pending" ON "remerge_requests" ("requested_at") WHERE "done_at" IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "remerge_requests"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When the merge first wrote each member row (its step's time): the `_created_at` of an audience
 * contact is the earliest of its members' and of the contacts it absorbed (ADR 0353), so a source
 * contact that leaves a merged contact takes its own time along, not the split's. Nullable and not
 * backfilled (a table of every source contact): a row without it counts from the `_created_at` of
 * the contact it belongs to, and gets that value the next time the merge writes the row.
 */
export class AudienceMemberFirstAt1795269790000 implements MigrationInterface {
  name = 'AudienceMemberFirstAt1795269790000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "audience_members" ADD COLUMN "first_at" TIMESTAMP WITH TIME ZONE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "audience_members" DROP COLUMN IF EXISTS "first_at"`);
  }
}

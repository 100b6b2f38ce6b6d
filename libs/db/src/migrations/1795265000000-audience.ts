import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The merge side (docs/design-data-path.md): audience contacts and the state identity-merge
 * needs to update them incrementally. Only identity-merge writes these tables, with SQL
 * from its repository (no entities: rows are never loaded as objects).
 */
export class Audience1795265000000 implements MigrationInterface {
  name = 'Audience1795265000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "audience_contacts" (
      "project_id" uuid NOT NULL,
      "id" uuid NOT NULL,
      "attributes" jsonb NOT NULL DEFAULT '{}',
      "lineage" jsonb NOT NULL DEFAULT '{}',
      "datasources" jsonb NOT NULL DEFAULT '[]',
      "ds_contact_ids" jsonb NOT NULL DEFAULT '[]',
      "version" bigint NOT NULL DEFAULT 1,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_audience_contacts" PRIMARY KEY ("project_id", "id"))`);
    // Search by email / phone / user id reads the merged attributes.
    await q.query(`CREATE INDEX "IDX_audience_contacts_email" ON "audience_contacts" ("project_id", lower("attributes"->>'_email'))`);
    await q.query(`CREATE INDEX "IDX_audience_contacts_phone" ON "audience_contacts" ("project_id", ("attributes"->>'_phone_mobile'))`);
    await q.query(`CREATE INDEX "IDX_audience_contacts_user" ON "audience_contacts" ("project_id", ("attributes"->>'_user_id'))`);
    // Source contact → audience contact. `seq` is the order in which the merge first saw the
    // contact: the oldest member decides which id a component keeps. `applied_version` is
    // the source_contacts version last merged, so replays and stale messages are skipped.
    await q.query(`CREATE TABLE "audience_members" (
      "project_id" uuid NOT NULL,
      "data_source_id" uuid NOT NULL,
      "user_id" text NOT NULL,
      "audience_id" uuid NOT NULL,
      "seq" bigserial NOT NULL,
      "applied_version" bigint NOT NULL DEFAULT 0,
      CONSTRAINT "PK_audience_members" PRIMARY KEY ("project_id", "data_source_id", "user_id"))`);
    await q.query(`CREATE INDEX "IDX_audience_members_audience" ON "audience_members" ("project_id", "audience_id")`);
    // Normalised merge keys of each live source contact, as last applied.
    await q.query(`CREATE TABLE "merge_keys" (
      "project_id" uuid NOT NULL,
      "attribute" text NOT NULL,
      "value" text NOT NULL,
      "data_source_id" uuid NOT NULL,
      "user_id" text NOT NULL,
      CONSTRAINT "PK_merge_keys" PRIMARY KEY ("project_id", "attribute", "value", "data_source_id", "user_id"))`);
    await q.query(`CREATE INDEX "IDX_merge_keys_contact" ON "merge_keys" ("project_id", "data_source_id", "user_id")`);
    // An absorbed audience id keeps resolving to the contact that absorbed it.
    await q.query(`CREATE TABLE "audience_aliases" (
      "project_id" uuid NOT NULL,
      "absorbed_id" uuid NOT NULL,
      "survivor_id" uuid NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_audience_aliases" PRIMARY KEY ("project_id", "absorbed_id"))`);
    await q.query(`CREATE INDEX "IDX_audience_aliases_survivor" ON "audience_aliases" ("project_id", "survivor_id")`);
    // `meld.audience.v1` messages written in the merge transaction, published after commit.
    await q.query(`CREATE TABLE "audience_outbox" (
      "id" bigserial NOT NULL,
      "key" text NOT NULL,
      "value" jsonb NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_audience_outbox" PRIMARY KEY ("id"))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS "audience_outbox"`);
    await q.query(`DROP TABLE IF EXISTS "audience_aliases"`);
    await q.query(`DROP TABLE IF EXISTS "merge_keys"`);
    await q.query(`DROP TABLE IF EXISTS "audience_members"`);
    await q.query(`DROP TABLE IF EXISTS "audience_contacts"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ingest write side (docs/design-data-path.md): data-source contacts, the transactional
 * outbox its relay drains in id order, and the event-id dedup set. Queried with SQL from
 * the ingest repositories (no entities: the rows are never loaded as objects).
 */
export class IngestWrite1795264000000 implements MigrationInterface {
  name = 'IngestWrite1795264000000';

  async up(q: QueryRunner): Promise<void> {
    // One row per (project, data source, _user_id). `attribute_at` keeps, per attribute, the
    // time of the write that set it, so an older event's `_user_data` cannot overwrite it.
    // A deleted contact keeps its key row (personal data cleared, `deleted_at` set) so its
    // version keeps growing and a later upsert is ordered after the delete.
    await q.query(`CREATE TABLE "source_contacts" (
      "project_id" uuid NOT NULL,
      "data_source_id" uuid NOT NULL,
      "user_id" text NOT NULL,
      "attributes" jsonb NOT NULL DEFAULT '{}',
      "attribute_at" jsonb NOT NULL DEFAULT '{}',
      "version" bigint NOT NULL DEFAULT 0,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "deleted_at" TIMESTAMP WITH TIME ZONE,
      CONSTRAINT "PK_source_contacts" PRIMARY KEY ("project_id", "data_source_id", "user_id"))`);
    // The relay reads the oldest rows first (primary key order) and deletes them after the ack.
    await q.query(`CREATE TABLE "outbox" (
      "id" bigserial NOT NULL,
      "topic" text NOT NULL,
      "key" text NOT NULL,
      "value" jsonb NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_outbox" PRIMARY KEY ("id"))`);
    await q.query(`CREATE TABLE "event_ids" (
      "project_id" uuid NOT NULL,
      "event_id" text NOT NULL,
      "accepted_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_event_ids" PRIMARY KEY ("project_id", "event_id"))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS "event_ids"`);
    await q.query(`DROP TABLE IF EXISTS "outbox"`);
    await q.query(`DROP TABLE IF EXISTS "source_contacts"`);
  }
}

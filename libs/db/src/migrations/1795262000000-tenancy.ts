import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Organizations, projects, data sources, tokens, dashboard users, the catalogue, senders, webhooks. */
export class Tenancy1795262000000 implements MigrationInterface {
  name = 'Tenancy1795262000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "attributes" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "project_id" uuid NOT NULL, "uid" text NOT NULL, "label" text NOT NULL, "type" text NOT NULL, "multivalue" boolean NOT NULL DEFAULT false, "enabled" boolean NOT NULL DEFAULT true, "visible" boolean NOT NULL DEFAULT true, "internal" boolean NOT NULL DEFAULT false, "unique" boolean NOT NULL DEFAULT false, "reserved" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_32216e2e61830211d3a5d7fa72c" PRIMARY KEY ("id"))`);
    await q.query(`CREATE UNIQUE INDEX "IDX_583d7d58677efd415cc3b32d88" ON "attributes"  ("project_id", "uid")`);
    await q.query(`CREATE TABLE "data_sources" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "project_id" uuid NOT NULL, "name" text NOT NULL, "connector" text NOT NULL DEFAULT 'api', "priority" integer NOT NULL DEFAULT '0', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_dc70b1c6b641726739857fd938d" PRIMARY KEY ("id"))`);
    await q.query(`CREATE INDEX "IDX_c467d57c019c9efe569a04339a" ON "data_sources"  ("project_id")`);
    await q.query(`CREATE TABLE "event_types" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "project_id" uuid NOT NULL, "uid" text NOT NULL, "name" text NOT NULL, "category" text NOT NULL, "attribution" boolean NOT NULL DEFAULT false, "automation" boolean NOT NULL DEFAULT false, "important" boolean NOT NULL DEFAULT false, "retention_days" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_ffe6b2d60596409fb08fb13830d" PRIMARY KEY ("id"))`);
    await q.query(`CREATE UNIQUE INDEX "IDX_1b42e5ad746acb2b36e51d7009" ON "event_types"  ("project_id", "uid")`);
    await q.query(`CREATE TABLE "event_parameters" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "event_type_id" uuid NOT NULL, "parameter" text NOT NULL, "title" text NOT NULL, "data_type" text NOT NULL, "required" boolean NOT NULL DEFAULT false, "multi_value" integer NOT NULL DEFAULT '1', "max_length" integer, CONSTRAINT "PK_883443d079f9ffe4ea6715bc4e5" PRIMARY KEY ("id"))`);
    await q.query(`CREATE UNIQUE INDEX "IDX_9ffc1840f78ba20997510db89b" ON "event_parameters"  ("event_type_id", "parameter")`);
    await q.query(`CREATE TABLE "organizations" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "name" text NOT NULL, "plan" text NOT NULL, "api_tier" text NOT NULL DEFAULT 'standard', "funds" numeric(14,4) NOT NULL DEFAULT '0', "prepaid" boolean NOT NULL DEFAULT false, "data_mode" text NOT NULL DEFAULT 'normal', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_6b031fcd0863e3f6b44230163f9" PRIMARY KEY ("id"))`);
    await q.query(`CREATE TABLE "projects" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "uid" text NOT NULL, "organization_id" uuid NOT NULL, "name" text NOT NULL, "description" text, "project_type" text NOT NULL DEFAULT 'standard', "project_status" text NOT NULL DEFAULT 'active', "locale" text NOT NULL DEFAULT 'en_US', "timezone" text NOT NULL DEFAULT 'UTC', "default_sms_sender" text, "short_tracking_domain" text, "unsubscribe_tracking_domain" text, "business_type" text, "business_contacts_size" integer NOT NULL DEFAULT '0', "business_url" text NOT NULL DEFAULT '', "locked_until" TIMESTAMP WITH TIME ZONE, "locked_reason" text, "test_sms_numbers" jsonb NOT NULL DEFAULT '[]', "conversion_config" jsonb, "attribution_config" jsonb NOT NULL, "general_config" jsonb NOT NULL, "brand" jsonb, "merging_attributes" text array NOT NULL DEFAULT '{}', "data_mode" text, "legal_profile_status" text NOT NULL DEFAULT 'missing', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_6271df0a7aed1d6c0691ce6ac50" PRIMARY KEY ("id"))`);
    await q.query(`CREATE UNIQUE INDEX "IDX_f11ed15665df2a5d453e2fb7bd" ON "projects"  ("uid")`);
    await q.query(`CREATE INDEX "IDX_585c8ce06628c70b70100bfb84" ON "projects"  ("organization_id")`);
    await q.query(`CREATE TABLE "senders" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "project_id" uuid NOT NULL, "channel" text NOT NULL, "alias" text NOT NULL, "name" text NOT NULL, "status" text NOT NULL DEFAULT 'active', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_398b8614004a406acf982651b46" PRIMARY KEY ("id"))`);
    await q.query(`CREATE INDEX "IDX_c2427bf341d88afa2fba60327b" ON "senders"  ("project_id")`);
    await q.query(`CREATE TABLE "sender_countries" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "sender_id" uuid NOT NULL, "country" text NOT NULL, "accepted" boolean NOT NULL DEFAULT true, "effective_status" text NOT NULL DEFAULT 'active', "price" numeric(10,5) NOT NULL DEFAULT '0', CONSTRAINT "PK_ccac1665100b10e271a25780ad3" PRIMARY KEY ("id"))`);
    await q.query(`CREATE UNIQUE INDEX "IDX_ed699c7fba64bcc2334c584679" ON "sender_countries"  ("sender_id", "country")`);
    await q.query(`CREATE TABLE "tokens" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid NOT NULL, "kind" text NOT NULL, "secret_hash" text NOT NULL, "prefix" text NOT NULL, "scopes" text array NOT NULL DEFAULT '{}', "projects" text array NOT NULL DEFAULT '{}', "data_source_id" uuid, "user_id" uuid, "label" text, "expires_at" TIMESTAMP WITH TIME ZONE, "revoked_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_3001e89ada36263dabf1fb6210a" PRIMARY KEY ("id"))`);
    await q.query(`CREATE INDEX "IDX_92c77a5bf5434e1f08a899e879" ON "tokens"  ("organization_id")`);
    await q.query(`CREATE UNIQUE INDEX "IDX_db02b1109721f1221bde95f868" ON "tokens"  ("secret_hash")`);
    await q.query(`CREATE TABLE "users" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid NOT NULL, "email" text NOT NULL, "password_hash" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_a3ffb1c0c8416b9fc6f907b7433" PRIMARY KEY ("id"))`);
    await q.query(`CREATE INDEX "IDX_21a659804ed7bf61eb91688dea" ON "users"  ("organization_id")`);
    await q.query(`CREATE UNIQUE INDEX "IDX_97672ac88f789774dd47f7c8be" ON "users"  ("email")`);
    await q.query(`CREATE TABLE "webhooks" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "organization_id" uuid NOT NULL, "kind" text NOT NULL, "url" text NOT NULL, "secret" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_9e8795cfc899ab7bdaa831e8527" PRIMARY KEY ("id"))`);
    await q.query(`CREATE UNIQUE INDEX "IDX_230d8b5273a11707afd019dde1" ON "webhooks"  ("organization_id", "kind") `);
    await q.query(`ALTER TABLE "projects" ADD CONSTRAINT "fk_projects_organization_id" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "data_sources" ADD CONSTRAINT "fk_data_sources_project_id" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "tokens" ADD CONSTRAINT "fk_tokens_organization_id" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "tokens" ADD CONSTRAINT "fk_tokens_data_source_id" FOREIGN KEY ("data_source_id") REFERENCES "data_sources"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "users" ADD CONSTRAINT "fk_users_organization_id" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "tokens" ADD CONSTRAINT "fk_tokens_user_id" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "attributes" ADD CONSTRAINT "fk_attributes_project_id" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "event_types" ADD CONSTRAINT "fk_event_types_project_id" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "event_parameters" ADD CONSTRAINT "fk_event_parameters_event_type_id" FOREIGN KEY ("event_type_id") REFERENCES "event_types"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "senders" ADD CONSTRAINT "fk_senders_project_id" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "sender_countries" ADD CONSTRAINT "fk_sender_countries_sender_id" FOREIGN KEY ("sender_id") REFERENCES "senders"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "webhooks" ADD CONSTRAINT "fk_webhooks_organization_id" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS "webhooks" CASCADE`);
    await q.query(`DROP TABLE IF EXISTS "users" CASCADE`);
    await q.query(`DROP TABLE IF EXISTS "tokens" CASCADE`);
    await q.query(`DROP TABLE IF EXISTS "sender_countries" CASCADE`);
    await q.query(`DROP TABLE IF EXISTS "senders" CASCADE`);
    await q.query(`DROP TABLE IF EXISTS "projects" CASCADE`);
    await q.query(`DROP TABLE IF EXISTS "organizations" CASCADE`);
    await q.query(`DROP TABLE IF EXISTS "event_parameters" CASCADE`);
    await q.query(`DROP TABLE IF EXISTS "event_types" CASCADE`);
    await q.query(`DROP TABLE IF EXISTS "data_sources" CASCADE`);
    await q.query(`DROP TABLE IF EXISTS "attributes" CASCADE`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OAuth 2.1 storage (ADR 0142). Every secret is stored as its SHA-256 only (client secrets,
 * codes, refresh tokens, consent sessions), like product tokens. Access tokens are rows of
 * `tokens` (kind 'oauth') so the gateway checks them with its one lookup; `oauth_grant_id`
 * ties them to the approval that produced them, so revoking a grant ends them all.
 * `organizations.oauth_sensitive_scopes` is the operator's permission for OAuth clients to
 * receive PROJECT_AUDIENCE_DATA_FULL and PROJECT_AGGREGATIONS (ADR 0144).
 */
export class OAuth1795269500000 implements MigrationInterface {
  name = 'OAuth1795269500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "oauth_clients" (
      "id" text PRIMARY KEY,
      "secret_hash" text,
      "name" text NOT NULL,
      "redirect_uris" text array NOT NULL,
      "token_endpoint_auth_method" text NOT NULL,
      "metadata" jsonb NOT NULL DEFAULT '{}',
      "revoked_at" timestamptz,
      "created_at" timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE TABLE "oauth_grants" (
      "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      "client_id" text NOT NULL REFERENCES "oauth_clients"("id") ON DELETE CASCADE,
      "user_id" uuid NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
      "organization_id" uuid NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE,
      "scopes" text array NOT NULL,
      "projects" text array NOT NULL,
      "resource" text,
      "revoked_at" timestamptz,
      "created_at" timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX "IDX_oauth_grants_user" ON "oauth_grants" ("user_id")`);
    await q.query(`CREATE INDEX "IDX_oauth_grants_client" ON "oauth_grants" ("client_id")`);
    await q.query(`CREATE TABLE "oauth_codes" (
      "code_hash" text PRIMARY KEY,
      "grant_id" uuid NOT NULL REFERENCES "oauth_grants"("id") ON DELETE CASCADE,
      "redirect_uri" text NOT NULL,
      "code_challenge" text NOT NULL,
      "expires_at" timestamptz NOT NULL,
      "used_at" timestamptz)`);
    await q.query(`CREATE TABLE "oauth_refresh_tokens" (
      "token_hash" text PRIMARY KEY,
      "grant_id" uuid NOT NULL REFERENCES "oauth_grants"("id") ON DELETE CASCADE,
      "expires_at" timestamptz NOT NULL,
      "rotated_at" timestamptz,
      "created_at" timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX "IDX_oauth_refresh_tokens_grant" ON "oauth_refresh_tokens" ("grant_id")`);
    await q.query(`CREATE TABLE "oauth_sessions" (
      "token_hash" text PRIMARY KEY,
      "user_id" uuid NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
      "expires_at" timestamptz NOT NULL)`);
    await q.query(`CREATE TABLE "oauth_login_failures" ("key" text NOT NULL, "at" timestamptz NOT NULL DEFAULT now())`);
    await q.query(`CREATE INDEX "IDX_oauth_login_failures_key_at" ON "oauth_login_failures" ("key", "at")`);
    await q.query(`ALTER TABLE "tokens" ADD COLUMN "oauth_grant_id" uuid`);
    await q.query(`ALTER TABLE "tokens" ADD CONSTRAINT "fk_tokens_oauth_grant_id" FOREIGN KEY ("oauth_grant_id") REFERENCES "oauth_grants"("id") ON DELETE CASCADE`);
    await q.query(`CREATE INDEX "IDX_tokens_oauth_grant" ON "tokens" ("oauth_grant_id") WHERE "oauth_grant_id" IS NOT NULL`);
    await q.query(`ALTER TABLE "organizations" ADD COLUMN "oauth_sensitive_scopes" boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "organizations" DROP COLUMN "oauth_sensitive_scopes"`);
    await q.query(`ALTER TABLE "tokens" DROP COLUMN "oauth_grant_id"`);
    for (const t of ['oauth_login_failures', 'oauth_sessions', 'oauth_refresh_tokens', 'oauth_codes', 'oauth_grants', 'oauth_clients']) await q.query(`DROP TABLE "${t}"`);
  }
}

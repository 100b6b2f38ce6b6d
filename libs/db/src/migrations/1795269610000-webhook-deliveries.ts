import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delivery-report webhooks (issue 17, ADR 0155): one row per status change of a direct SMS
 * whose organization has an `sms-status` webhook, written in the status change's own
 * transaction, so no acknowledged change is ever without its delivery. `seq` orders the
 * deliveries of one message (a later one waits while an earlier one is `pending`); the id is
 * the event id receivers de-duplicate on. `body` is the exact JSON that is signed and sent.
 * `retry_from` starts the 24 h retry window (reset by an operator's retry).
 */
export class WebhookDeliveries1795269610000 implements MigrationInterface {
  name = 'WebhookDeliveries1795269610000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "webhook_deliveries" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(),
      "seq" bigserial NOT NULL,
      "organization_id" uuid NOT NULL,
      "project_id" uuid NOT NULL,
      "sms_id" uuid NOT NULL,
      "body" text NOT NULL,
      "status" text NOT NULL DEFAULT 'pending',
      "attempts" integer NOT NULL DEFAULT 0,
      "last_error" text,
      "last_status_code" integer,
      "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "locked_until" TIMESTAMP WITH TIME ZONE,
      "retry_from" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "delivered_at" TIMESTAMP WITH TIME ZONE,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_webhook_deliveries" PRIMARY KEY ("id"),
      CONSTRAINT "CHK_webhook_deliveries_status" CHECK ("status" IN ('pending', 'delivered', 'failed')))`);
    // The head of each message's line, and the sweep of due deliveries.
    await q.query(`CREATE INDEX "IDX_webhook_deliveries_pending_sms" ON "webhook_deliveries" ("sms_id", "seq") WHERE "status" = 'pending'`);
    await q.query(`CREATE INDEX "IDX_webhook_deliveries_pending_due" ON "webhook_deliveries" ("next_attempt_at") WHERE "status" = 'pending'`);
    // The operator's list: an organization's deliveries by status, newest first.
    await q.query(`CREATE INDEX "IDX_webhook_deliveries_org_status" ON "webhook_deliveries" ("organization_id", "status", "seq")`);
    await q.query(`ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "fk_webhook_deliveries_sms_id" FOREIGN KEY ("sms_id") REFERENCES "sms_messages"("id") ON DELETE CASCADE`);
    await q.query(`ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "fk_webhook_deliveries_organization_id" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS "webhook_deliveries"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Direct SMS (issue 17, ADR 0151): the messages, their status history and the outbox of
 * `meld.sms-status.v1`. Only the messaging app writes them, with SQL (no entities).
 * `price_per_sms` is the sender's price for the destination country when enqueued;
 * `reserved_funds` is what a prepaid organization had taken at enqueue and is given back
 * (and zeroed) when the message ends `failed` or `rejected`. `request_hash` fingerprints
 * sender, target and text, so a reused `Idempotency-Key` with another request is refused.
 */
export class SmsMessages1795269600000 implements MigrationInterface {
  name = 'SmsMessages1795269600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "sms_messages" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(),
      "project_id" uuid NOT NULL,
      "organization_id" uuid NOT NULL,
      "sender_id" uuid NOT NULL,
      "audience_id" uuid,
      "destination" text NOT NULL,
      "country" text NOT NULL,
      "text" text NOT NULL,
      "encoding" text NOT NULL,
      "messages_count" integer NOT NULL,
      "price_per_sms" numeric(10,5) NOT NULL,
      "status" text NOT NULL DEFAULT 'enqueued',
      "error" text,
      "smsc_message_id" text,
      "idempotency_key" text,
      "request_hash" text,
      "response" jsonb,
      "reserved_funds" numeric(14,4) NOT NULL DEFAULT 0,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_sms_messages" PRIMARY KEY ("id"),
      CONSTRAINT "CHK_sms_messages_status" CHECK ("status" IN ('enqueued', 'sent', 'delivered', 'undelivered', 'expired', 'failed', 'rejected')),
      CONSTRAINT "CHK_sms_messages_encoding" CHECK ("encoding" IN ('GSM-7', 'UCS-2')),
      CONSTRAINT "CHK_sms_messages_reserved" CHECK ("reserved_funds" >= 0))`);
    await q.query(`CREATE UNIQUE INDEX "UQ_sms_messages_idempotency" ON "sms_messages" ("project_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL`);
    // Receipts find their message by the SMSC's id.
    await q.query(`CREATE INDEX "IDX_sms_messages_smsc_id" ON "sms_messages" ("smsc_message_id") WHERE "smsc_message_id" IS NOT NULL`);
    await q.query(`CREATE INDEX "IDX_sms_messages_project_created" ON "sms_messages" ("project_id", "created_at", "id")`);
    await q.query(`CREATE INDEX "IDX_sms_messages_audience" ON "sms_messages" ("project_id", "audience_id")`);
    // The recovery sweep looks for messages still waiting to be queued.
    await q.query(`CREATE INDEX "IDX_sms_messages_enqueued" ON "sms_messages" ("created_at") WHERE "status" = 'enqueued'`);
    await q.query(`ALTER TABLE "sms_messages" ADD CONSTRAINT "fk_sms_messages_project_id" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE`);

    await q.query(`CREATE TABLE "sms_status_history" (
      "id" bigserial NOT NULL,
      "sms_id" uuid NOT NULL,
      "status" text NOT NULL,
      "error" text,
      "at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_sms_status_history" PRIMARY KEY ("id"))`);
    await q.query(`CREATE INDEX "IDX_sms_status_history_sms" ON "sms_status_history" ("sms_id", "id")`);
    await q.query(`ALTER TABLE "sms_status_history" ADD CONSTRAINT "fk_sms_status_history_sms_id" FOREIGN KEY ("sms_id") REFERENCES "sms_messages"("id") ON DELETE CASCADE`);

    // `meld.sms-status.v1` messages written with each status change, published after commit.
    await q.query(`CREATE TABLE "sms_outbox" (
      "id" bigserial NOT NULL,
      "key" text NOT NULL,
      "value" jsonb NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_sms_outbox" PRIMARY KEY ("id"))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS "sms_outbox"`);
    await q.query(`DROP TABLE IF EXISTS "sms_status_history"`);
    await q.query(`DROP TABLE IF EXISTS "sms_messages"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery reports owed to organizations' webhooks, written with each status change and
 * deleted once the first attempt delivered them or handed them to `webhook_deliveries` for
 * retries (ADR 0323). An outbox like `sms_outbox`: a bigserial key and nothing else indexed, so a
 * report costs one heap row and one right-hand index entry, and the pump's pass one read and one
 * delete for all its rows. Writes wake the delivery processes' pumps (ADR 0212).
 */
export class SmsWebhookOutbox1795269730000 implements MigrationInterface {
  name = 'SmsWebhookOutbox1795269730000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "sms_webhook_outbox" (
      "id" bigserial NOT NULL,
      "key" text NOT NULL,
      "value" jsonb NOT NULL,
      "trace" jsonb,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "PK_sms_webhook_outbox" PRIMARY KEY ("id"))`);
    await q.query(`CREATE TRIGGER "sms_webhook_outbox_notify" AFTER INSERT ON "sms_webhook_outbox" FOR EACH STATEMENT EXECUTE FUNCTION meld_outbox_notify()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS "sms_webhook_outbox"`);
  }
}

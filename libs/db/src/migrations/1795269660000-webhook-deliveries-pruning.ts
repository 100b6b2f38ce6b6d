import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delivered webhook deliveries are pruned after a retention (ADR 0203): the pruner finds
 * them by when they were delivered, without reading the pending and failed ones.
 */
export class WebhookDeliveriesPruning1795269660000 implements MigrationInterface {
  name = 'WebhookDeliveriesPruning1795269660000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "IDX_webhook_deliveries_delivered_at" ON "webhook_deliveries" ("delivered_at") WHERE "status" = 'delivered'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS "IDX_webhook_deliveries_delivered_at"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = ['outbox', 'audience_outbox', 'sms_outbox'];

/**
 * The trace context each outbox row was written under (ADR 0213): the Kafka headers its relay
 * sends the message with (`traceparent` when tracing is on, `x-request-id`). Null for rows
 * written outside any request or message, and for those written before this migration.
 */
export class OutboxTrace1795269721200 implements MigrationInterface {
  name = 'OutboxTrace1795269721200';

  async up(q: QueryRunner): Promise<void> {
    for (const t of TABLES) await q.query(`ALTER TABLE "${t}" ADD COLUMN "trace" jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of TABLES) await q.query(`ALTER TABLE "${t}" DROP COLUMN "trace"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rows an outbox relay can never publish (ADR 0346): Kafka refused them for good (larger than
 * its `message.max.bytes`, an invalid record) or they fail their topic's schema. The relay moves
 * them here in its pass's transaction, so they hold back nothing and lose nothing: each keeps its
 * outbox, id, topic, key, value, trace and time, and the error. One table for every outbox. No
 * notify trigger: nothing drains it; an operator re-queues a row once its cause is fixed.
 * Indexed by outbox (the relays' `meld_outbox_dead_letters` gauge counts them every second) and
 * by key (a contact's delete removes its dead letters with its data).
 */
export class OutboxDeadLetters1795269780000 implements MigrationInterface {
  name = 'OutboxDeadLetters1795269780000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "outbox_dead_letters" (
      "id" bigserial NOT NULL,
      "outbox" text NOT NULL,
      "outbox_id" bigint NOT NULL,
      "topic" text NOT NULL,
      "key" text NOT NULL,
      "value" jsonb NOT NULL,
      "trace" jsonb,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
      "dead_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "error" text NOT NULL,
      CONSTRAINT "PK_outbox_dead_letters" PRIMARY KEY ("id"))`);
    await q.query(`CREATE INDEX "IDX_outbox_dead_letters_outbox" ON "outbox_dead_letters" ("outbox")`);
    await q.query(`CREATE INDEX "IDX_outbox_dead_letters_key" ON "outbox_dead_letters" ("key")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS "outbox_dead_letters"`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The send queue's job of each direct SMS (ADR 0324): a job carries the messages of one send
 * batch, and the recovery sweep asks BullMQ about that job before it queues a message again,
 * so a message is only ever in one job. Nullable, no default: adding it rewrites nothing, and a
 * row from before it (NULL) is queued under its own id, as every message was until then.
 */
export class SmsSendJob1795269740000 implements MigrationInterface {
  name = 'SmsSendJob1795269740000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sms_messages" ADD COLUMN "send_job" uuid`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sms_messages" DROP COLUMN "send_job"`);
  }
}

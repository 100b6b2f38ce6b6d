import { Topics, audienceChange } from '@meld/contracts';
import { DATA_SOURCE } from '@meld/db';
import { createProducer, type Producer } from '@meld/kafka';
import { KAFKA, type KafkaClient, metricsRegistry } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { DataSource } from 'typeorm';

const BATCH = 500;
const IDLE_MS = 250;
const ERROR_BACKOFF_MS = 1000;

/**
 * Publishes `audience_outbox` to `meld.audience.v1` after the merge transactions commit:
 * oldest rows first, acks -1, deleted in the same transaction after the ack (at-least-once;
 * audience consumers upsert by version). One relay at a time across replicas (advisory
 * lock), so messages of one audience contact leave in order. Same shape as ingest's relay;
 * a separate table so the merge never depends on the ingest app running.
 */
@Injectable()
export class AudienceOutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('AudienceOutboxRelay');
  private readonly producer: Producer;
  private stopped = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private nudged = false;

  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    @Inject(KAFKA) client: KafkaClient,
  ) {
    this.producer = createProducer({ kafka: client.kafka, brokers: client.brokers, clientId: 'meld-identity-merge', metrics: metricsRegistry });
  }

  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  /** A merge step committed outbox rows: publish now rather than at the next poll. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.producer.disconnect();
  }

  /** One pass: publishes up to BATCH rows; 0 when empty or another relay holds the lock. */
  async drainOnce(): Promise<number> {
    const qr = this.ds.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      const [{ locked }] = await qr.query(`SELECT pg_try_advisory_xact_lock(hashtext('meld.audience-outbox.relay')) AS locked`);
      if (!locked) {
        await qr.rollbackTransaction();
        return 0;
      }
      const rows: { id: string; key: string; value: unknown }[] = await qr.query(`SELECT id, key, value FROM audience_outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`, [BATCH]);
      if (rows.length) {
        await this.producer.send(Topics.audience, rows.map((r) => ({ key: r.key, value: r.value })), { schema: audienceChange });
        await qr.query(`DELETE FROM audience_outbox WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)]);
      }
      await qr.commitTransaction();
      return rows.length;
    } catch (err) {
      if (qr.isTransactionActive) await qr.rollbackTransaction().catch(() => undefined);
      throw err;
    } finally {
      await qr.release();
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let published = 0;
      let wait = IDLE_MS;
      try {
        if (this.ds.isInitialized) published = await this.drainOnce();
      } catch (err) {
        this.logger.warn(`audience outbox pass failed, retrying: ${err instanceof Error ? err.message : String(err)}`);
        wait = ERROR_BACKOFF_MS;
      }
      if (published < BATCH || wait === ERROR_BACKOFF_MS) await this.sleep(wait);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped || this.nudged) {
      this.nudged = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.nudged = false;
        resolve();
      };
    });
  }
}

import { DATA_SOURCE } from '@meld/db';
import { metricsRegistry } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Gauge } from 'prom-client';
import type { DataSource } from 'typeorm';
import { IngestProducer } from './ingest-producer';

const BATCH = 500;
const IDLE_MS = 250;
const ERROR_BACKOFF_MS = 1000;
const METRICS_EVERY_MS = 1000;

const depth = new Gauge({ name: 'meld_outbox_depth', help: 'Rows waiting in the outbox', registers: [metricsRegistry] });
const lag = new Gauge({ name: 'meld_outbox_lag_seconds', help: 'Age of the oldest outbox row (0 when empty)', registers: [metricsRegistry] });

/**
 * Publishes the outbox (docs/design-data-path.md): oldest rows first, acks -1, deleted in
 * the same transaction after the ack, so a crash anywhere republishes (at-least-once;
 * consumers drop versions they applied) and never loses a row. One relay drains at a time
 * across replicas (a transaction-level advisory lock), so messages of one key leave in id
 * order; `FOR UPDATE SKIP LOCKED` keeps the row locks from ever blocking a writer's reads.
 * Polls every 250 ms, at once after a full batch or when a write in this process nudges it.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('OutboxRelay');
  private stopped = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private nudged = false;
  private lastMetrics = 0;

  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly producer: IngestProducer,
  ) {}

  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  /** A write committed outbox rows: publish them now rather than at the next poll. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  /** One pass: publishes up to BATCH rows; returns how many (0 when another relay holds the lock). */
  async drainOnce(): Promise<number> {
    const qr = this.ds.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      const [{ locked }] = await qr.query(`SELECT pg_try_advisory_xact_lock(hashtext('meld.outbox.relay')) AS locked`);
      if (!locked) {
        await qr.rollbackTransaction();
        return 0;
      }
      const rows: { id: string; topic: string; key: string; value: unknown }[] = await qr.query(
        `SELECT id, topic, key, value FROM outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [BATCH],
      );
      const byTopic = new Map<string, { key: string; value: unknown }[]>();
      for (const r of rows) {
        const list = byTopic.get(r.topic) ?? [];
        list.push({ key: r.key, value: r.value });
        byTopic.set(r.topic, list);
      }
      for (const [topic, messages] of byTopic) await this.producer.send(topic, messages);
      if (rows.length > 0) await qr.query(`DELETE FROM outbox WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)]);
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
        if (this.ds.isInitialized) {
          published = await this.drainOnce();
          await this.updateMetrics();
        }
      } catch (err) {
        this.logger.warn(`outbox relay pass failed, retrying: ${err instanceof Error ? err.message : String(err)}`);
        wait = ERROR_BACKOFF_MS;
      }
      if (published < BATCH || wait === ERROR_BACKOFF_MS) await this.sleep(wait);
    }
  }

  private async updateMetrics(): Promise<void> {
    const now = Date.now();
    if (now - this.lastMetrics < METRICS_EVERY_MS) return;
    this.lastMetrics = now;
    const [m] = await this.ds.query(
      `SELECT count(*)::int AS depth, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS lag FROM outbox`,
    );
    depth.set(Number(m.depth));
    lag.set(Number(m.lag));
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped || this.nudged) {
      this.nudged = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        this.nudged = false;
        done();
      };
    });
  }
}

import { Logger } from '@nestjs/common';
import { Gauge, type Registry } from 'prom-client';
import type { DataSource } from 'typeorm';

export interface OutboxMessage {
  key: string;
  value: unknown;
  /** The trace context the row was written under (ADR 0213): `traceparent`, `x-request-id`. */
  headers?: Record<string, string>;
}

export interface OutboxPumpOptions {
  /**
   * Outbox table, named by the app that owns it: `id bigserial, key, value jsonb, trace jsonb,
   * created_at` (+ `topic` when `topic` is not fixed). A plain identifier, as it is spliced into SQL.
   */
  table: string;
  /** The one topic of a single-topic outbox; otherwise each row's `topic` column. */
  topic?: string;
  /** Sends in order and resolves after the broker acked (acks -1). */
  publish(topic: string, messages: OutboxMessage[]): Promise<void>;
  metrics: Registry;
  batch?: number;
  /**
   * The safety poll (default 5 s): the pump is woken by `nudge()` (its process's writes, and
   * every process's through LISTEN/NOTIFY, ADR 0212); this pass only catches a lost wake-up.
   */
  safetyPollMs?: number;
  /**
   * How long a pass that published less than a full batch waits before the next (default 0).
   * Gathers the rows of many small writes into one send, so a consumer that takes a fetch per
   * produce request (the development broker) gets bigger batches. A pass woken from idle runs
   * at once (ADR 0212): the first write after a quiet spell is not delayed.
   */
  lingerMs?: number;
  errorBackoffMs?: number;
}

/** A table name is spliced into SQL: only plain lower-case identifiers are accepted. */
const TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** How often a pump whose DataSource is still connecting looks again. */
const CONNECTING_POLL_MS = 250;

const gauges = new WeakMap<Registry, { depth: Gauge; lag: Gauge }>();
function gaugesOf(registry: Registry) {
  let g = gauges.get(registry);
  if (!g) {
    g = {
      depth: new Gauge({ name: 'meld_outbox_depth', help: 'Rows waiting in an outbox', labelNames: ['outbox'], registers: [registry] }),
      lag: new Gauge({ name: 'meld_outbox_lag_seconds', help: 'Age of the oldest outbox row (0 when empty)', labelNames: ['outbox'], registers: [registry] }),
    };
    gauges.set(registry, g);
  }
  return g;
}

interface OutboxRow {
  id: string;
  topic?: string;
  key: string;
  value: unknown;
  trace: Record<string, string> | null;
}

/**
 * Drains a transactional outbox into Kafka (docs/design-data-path.md): oldest rows first,
 * published with acks -1 and deleted in the same transaction after the ack, so a crash
 * anywhere republishes (at-least-once; consumers drop versions they applied) and never
 * loses a row. One pump per table drains at a time across replicas (a transaction-level
 * advisory lock), so messages of one key leave in id order; `FOR UPDATE SKIP LOCKED`
 * never blocks writers. Sleeps until nudged (or the safety poll), runs at once after a full batch.
 */
export class OutboxPump {
  private readonly log: Logger;
  private readonly batch: number;
  private stopped = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private nudged = false;
  private lastMetrics = 0;

  constructor(
    private readonly ds: DataSource,
    private readonly options: OutboxPumpOptions,
  ) {
    if (!TABLE_NAME.test(options.table)) throw new Error(`outbox table ${JSON.stringify(options.table)} is not a plain identifier`);
    this.log = new Logger(`outbox:${options.table}`);
    this.batch = options.batch ?? 500;
  }

  get table(): string {
    return this.options.table;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Rows were just committed: publish them now rather than at the next poll. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  /** One pass: publishes up to `batch` rows; 0 when empty or another pump holds the lock. */
  async drainOnce(): Promise<number> {
    const { table, topic } = this.options;
    const qr = this.ds.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      const [{ locked }] = await qr.query(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`, [`meld.${table}.pump`]);
      if (!locked) {
        await qr.rollbackTransaction();
        return 0;
      }
      const rows: OutboxRow[] = await qr.query(
        `SELECT id, ${topic ? '' : 'topic, '}key, value, trace FROM "${table}" ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.batch],
      );
      await this.publishByTopic(rows);
      if (rows.length) await qr.query(`DELETE FROM "${table}" WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)]);
      await qr.commitTransaction();
      return rows.length;
    } catch (err) {
      if (qr.isTransactionActive) await qr.rollbackTransaction().catch(() => undefined);
      throw err;
    } finally {
      await qr.release();
    }
  }

  /**
   * Each topic's rows in one send, in id order, all topics' sends at once: a producer groups
   * sends made together into one produce request (libs/kafka's GroupCommit). Rows of
   * interleaved topics (a status and its timeline event) used to cost a request each, one
   * after the other (ADR 0278). Order holds per topic, which is all a consumer can see.
   */
  private async publishByTopic(rows: readonly OutboxRow[]): Promise<void> {
    const byTopic = new Map<string, OutboxMessage[]>();
    for (const row of rows) {
      const t = this.options.topic ?? row.topic!;
      const list = byTopic.get(t);
      if (list) list.push(messageOf(row));
      else byTopic.set(t, [messageOf(row)]);
    }
    // Every send settles before the pass commits or rolls back, so no send of a failed pass
    // is still in flight when the next pass publishes the same rows again.
    const results = await Promise.allSettled([...byTopic].map(([t, messages]) => this.options.publish(t, messages)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async run(): Promise<void> {
    const safetyPoll = this.options.safetyPollMs ?? 5000;
    const backoff = this.options.errorBackoffMs ?? 1000;
    while (!this.stopped) {
      let published = 0;
      let wait = safetyPoll;
      try {
        if (this.ds.isInitialized) {
          published = await this.drainOnce();
          await this.updateMetrics();
        } else {
          wait = CONNECTING_POLL_MS;
        }
      } catch (err) {
        this.log.warn(`pass failed, retrying: ${err instanceof Error ? err.message : String(err)}`);
        // Nudges do not shorten it: every write of every process nudges, and a broker outage
        // would otherwise turn into a pass per write (ADR 0212).
        await this.sleep(backoff, { nudgeable: false });
        continue;
      }
      if (published === this.batch) continue;
      // Rows are flowing: let the next ones gather before the next pass (ADR 0090, ADR 0212).
      if (published > 0 && this.options.lingerMs && !this.stopped) await new Promise((resolve) => setTimeout(resolve, this.options.lingerMs));
      await this.sleep(wait);
    }
  }

  private async updateMetrics(): Promise<void> {
    const now = Date.now();
    if (now - this.lastMetrics < 1000) return;
    this.lastMetrics = now;
    const { table } = this.options;
    const [m] = await this.ds.query(
      `SELECT count(*)::int AS depth, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS lag FROM "${table}"`,
    );
    const g = gaugesOf(this.options.metrics);
    g.depth.labels(table).set(Number(m.depth));
    g.lag.labels(table).set(Number(m.lag));
  }

  /** Until `ms` passed, the pump stops, or (when `nudgeable`) it is nudged. */
  private sleep(ms: number, { nudgeable = true } = {}): Promise<void> {
    if (this.stopped || (nudgeable && this.nudged)) {
      this.nudged = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        if (!nudgeable && !this.stopped) return;
        clearTimeout(timer);
        this.wake = undefined;
        this.nudged = false;
        resolve();
      };
    });
  }
}

function messageOf(row: OutboxRow): OutboxMessage {
  return row.trace ? { key: row.key, value: row.value, headers: row.trace } : { key: row.key, value: row.value };
}

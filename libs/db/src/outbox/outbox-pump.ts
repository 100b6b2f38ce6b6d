import { errorSummary } from '@meld/contracts';
import { unpublishableReason, type UnpublishableReason } from '@meld/kafka';
import { Logger } from '@nestjs/common';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DataSource, QueryRunner } from 'typeorm';

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
  /**
   * Where rows that can never be published are set aside (ADR 0346), default
   * `outbox_dead_letters` (migration OutboxDeadLetters): one table for every outbox, a row
   * naming the outbox it left. A plain identifier, as it is spliced into SQL.
   */
  deadLetterTable?: string;
}

/** The table rows that can never be published go to (ADR 0346). */
export const OUTBOX_DEAD_LETTERS = 'outbox_dead_letters';

/** A table name is spliced into SQL: only plain lower-case identifiers are accepted. */
const TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** How often a pump whose DataSource is still connecting looks again. */
const CONNECTING_POLL_MS = 250;

const gauges = new WeakMap<Registry, { depth: Gauge; lag: Gauge; deadLetters: Gauge; deadLettered: Counter }>();
function gaugesOf(registry: Registry) {
  let g = gauges.get(registry);
  if (!g) {
    g = {
      depth: new Gauge({ name: 'meld_outbox_depth', help: 'Rows waiting in an outbox', labelNames: ['outbox'], registers: [registry] }),
      lag: new Gauge({ name: 'meld_outbox_lag_seconds', help: 'Age of the oldest outbox row (0 when empty)', labelNames: ['outbox'], registers: [registry] }),
      deadLetters: new Gauge({
        name: 'meld_outbox_dead_letters',
        help: 'Rows of an outbox set aside in outbox_dead_letters because Kafka can never take them (ADR 0346); they wait for an operator',
        labelNames: ['outbox'],
        registers: [registry],
      }),
      deadLettered: new Counter({
        name: 'meld_outbox_dead_lettered_total',
        help: 'Outbox rows this process set aside in outbox_dead_letters, by reason (ADR 0346)',
        labelNames: ['outbox', 'reason'],
        registers: [registry],
      }),
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

/** A row of a pass that can never be published, and why. */
interface SetAside {
  row: OutboxRow;
  topic: string;
  reason: UnpublishableReason;
  error: unknown;
}

/**
 * Drains a transactional outbox into Kafka (docs/design-data-path.md): oldest rows first,
 * published with acks -1 and deleted in the same transaction after the ack, so a crash
 * anywhere republishes (at-least-once; consumers drop versions they applied) and never
 * loses a row. One pump per table drains at a time across replicas (a transaction-level
 * advisory lock), so messages of one key leave in id order; `FOR UPDATE SKIP LOCKED`
 * never blocks writers. Sleeps until nudged (or the safety poll), runs at once after a full batch.
 *
 * A row Kafka can never take (too large, refused as a record, failing its topic's schema) does
 * not hold back the rows behind it (ADR 0346): when a send fails for such a reason the pass
 * finds the rows at fault by halving, publishes the others in order, and moves those rows to
 * `outbox_dead_letters` in the pass's transaction (a metric and a log line without the row's
 * key or value). Any other failure rolls the pass back and it is retried, as before.
 */
export class OutboxPump {
  private readonly log: Logger;
  private readonly batch: number;
  private readonly deadLetters: string;
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
    this.deadLetters = options.deadLetterTable ?? OUTBOX_DEAD_LETTERS;
    if (!TABLE_NAME.test(this.deadLetters)) throw new Error(`dead-letter table ${JSON.stringify(this.deadLetters)} is not a plain identifier`);
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

  /** One pass: publishes up to `batch` rows; 0 when empty or another pump holds the lock. Rows set aside count as done. */
  async drainOnce(): Promise<number> {
    const { table, topic } = this.options;
    const qr = this.ds.createQueryRunner();
    await qr.connect();
    let aside: SetAside[] = [];
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
      aside = await this.publishByTopic(rows);
      if (aside.length) await this.setAside(qr, aside);
      if (rows.length) await qr.query(`DELETE FROM "${table}" WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)]);
      await qr.commitTransaction();
      return rows.length;
    } catch (err) {
      aside = [];
      if (qr.isTransactionActive) await qr.rollbackTransaction().catch(() => undefined);
      throw err;
    } finally {
      await qr.release();
      this.reportSetAside(aside);
    }
  }

  /**
   * Each topic's rows in one send, in id order, all topics' sends at once: a producer groups
   * sends made together into one produce request (libs/kafka's GroupCommit). Rows of
   * interleaved topics (a status and its timeline event) used to cost a request each, one
   * after the other (ADR 0278). Order holds per topic, which is all a consumer can see.
   * Returns the rows that can never be published (ADR 0346); throws on any other failure.
   */
  private async publishByTopic(rows: readonly OutboxRow[]): Promise<SetAside[]> {
    const byTopic = new Map<string, OutboxRow[]>();
    for (const row of rows) {
      const t = this.options.topic ?? row.topic!;
      const list = byTopic.get(t);
      if (list) list.push(row);
      else byTopic.set(t, [row]);
    }
    const topics = [...byTopic];
    // Every send settles before the pass commits or rolls back, so no send of a failed pass
    // is still in flight when the next pass publishes the same rows again.
    const results = await Promise.allSettled(topics.map(([t, list]) => this.options.publish(t, list.map(messageOf))));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ topic: topics[i][0], rows: topics[i][1], error: r.reason as unknown }] : []));
    const retriable = failed.find((f) => unpublishableReason(f.error) === null);
    if (retriable) throw retriable.error;
    const aside: SetAside[] = [];
    for (const f of failed) aside.push(...(await this.isolate(f.topic, f.rows, f.error)));
    return aside;
  }

  /**
   * `rows` of `topic` failed together for a reason that will not go away: the ones at fault,
   * found by publishing halves in order (a half that fails again is halved again), so one bad
   * row among 500 costs ~18 sends once rather than the whole outbox forever. What the failed
   * send had written already is written again: consumers drop a version they applied.
   */
  private async isolate(topic: string, rows: readonly OutboxRow[], error: unknown): Promise<SetAside[]> {
    if (rows.length === 1) return [{ row: rows[0], topic, reason: unpublishableReason(error)!, error }];
    const mid = Math.ceil(rows.length / 2);
    const aside: SetAside[] = [];
    for (const half of [rows.slice(0, mid), rows.slice(mid)]) {
      try {
        await this.options.publish(topic, half.map(messageOf));
      } catch (err) {
        if (unpublishableReason(err) === null) throw err;
        aside.push(...(await this.isolate(topic, half, err)));
      }
    }
    return aside;
  }

  /** Copies the rows to the dead letters, in the pass's transaction (the pass then deletes them with the rest). */
  private async setAside(qr: QueryRunner, aside: readonly SetAside[]): Promise<void> {
    const { table } = this.options;
    await qr.query(
      `INSERT INTO "${this.deadLetters}" (outbox, outbox_id, topic, key, value, trace, created_at, error)
       SELECT $1, o.id, d.topic, o.key, o.value, o.trace, o.created_at, d.error
       FROM jsonb_to_recordset($2::jsonb) AS d(id bigint, topic text, error text)
       JOIN "${table}" o ON o.id = d.id
       ORDER BY o.id`,
      [table, JSON.stringify(aside.map((a) => ({ id: a.row.id, topic: a.topic, error: errorText(a) })))],
    );
  }

  /** After the pass: the metric, and a line per row without its key or value (ADR 0338). */
  private reportSetAside(aside: readonly SetAside[]): void {
    if (!aside.length) return;
    const { deadLettered } = gaugesOf(this.options.metrics);
    for (const a of aside) {
      deadLettered.labels(this.options.table, a.reason).inc();
      this.log.error(`row ${a.row.id} of ${a.topic} (${Buffer.byteLength(JSON.stringify(a.row.value))} bytes of value) can never be published (${a.reason}): set aside in ${this.deadLetters}, the rows behind it go on (ADR 0346)`);
    }
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
        this.log.warn(`pass failed, retrying: ${errorSummary(err)}`);
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
      `SELECT count(*)::int AS depth, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS lag,
              (SELECT count(*) FROM "${this.deadLetters}" WHERE outbox = $1)::int AS dead
       FROM "${table}"`,
      [table],
    );
    const g = gaugesOf(this.options.metrics);
    g.depth.labels(table).set(Number(m.depth));
    g.lag.labels(table).set(Number(m.lag));
    g.deadLetters.labels(table).set(Number(m.dead));
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

/** The dead letter's `error`: the reason and the error's message (no row data: Kafka's and the producer's messages quote none). */
function errorText({ reason, error }: SetAside): string {
  const message = error instanceof Error ? error.message : String(error);
  return `${reason}${reasonType(error)}: ${message}`.slice(0, 1000);
}

/** ` (MESSAGE_TOO_LARGE)`: the broker's error type where there is one. */
function reasonType(error: unknown): string {
  for (let e: unknown = error, depth = 0; depth < 5 && e && typeof e === 'object'; depth++, e = (e as { cause?: unknown }).cause) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string') return ` (${type})`;
  }
  return '';
}

import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import { numberedRows } from '../batching/numbered-rows';
import { planned } from '../db/prepared';
import { settingsPool } from '../db/settings-pool';

/** A report the webhook outbox's first attempts hand to the table (see `spill`). */
export type SpilledReport = {
  id: string;
  organizationId: string;
  projectId: string;
  smsId: string;
  body: string;
  status: 'pending' | 'failed';
  /** 1 after a failed attempt, 0 when queued behind an earlier report. */
  attempts: number;
  code: number | null;
  error: string | null;
  delaySeconds: number;
  /** Where the retry window starts: the status change's time. */
  retryFrom: string;
};

/** A due delivery, claimed by one attempt, with where and how to send it. */
export interface ClaimedDelivery {
  id: string;
  /** Attempts made before this one. */
  attempts: number;
  body: string;
  url: string;
  /** Null when the webhook has none (the column allows it; the admin API always sets one). */
  secret: string | null;
  /** Past the retry window once this attempt fails: it ends `failed`. */
  lastChance: boolean;
}

/**
 * Claims up to $1 due deliveries at the head of their message's line, with a lease of $2
 * seconds, `lastChance` once the retry window ($3 seconds) has passed (see `claimDue`);
 * exported for the test of its cost under a backlog.
 */
export const CLAIM_DUE = `UPDATE webhook_deliveries d SET locked_until = now() + make_interval(secs => $2), updated_at = now()
    WHERE d.id = ANY (ARRAY(
            SELECT c.id FROM webhook_deliveries c
             WHERE c.status = 'pending' AND c.next_attempt_at <= now() AND (c.locked_until IS NULL OR c.locked_until < now())
               AND c.seq = (SELECT e.seq FROM webhook_deliveries e WHERE e.sms_id = c.sms_id AND e.status = 'pending' ORDER BY e.seq LIMIT 1)
               AND (SELECT true FROM webhooks x WHERE x.organization_id = c.organization_id AND x.kind = 'sms-status' LIMIT 1)
             ORDER BY c.next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED))
    RETURNING d.id, d.attempts, d.body,
              (SELECT w.url FROM webhooks w WHERE w.organization_id = d.organization_id AND w.kind = 'sms-status') AS url,
              (SELECT w.secret FROM webhooks w WHERE w.organization_id = d.organization_id AND w.kind = 'sms-status') AS secret,
              d.retry_from + make_interval(secs => $3) <= now() AS "lastChance"`;

/**
 * The claim's planner setting, that of the connection it runs on (ADR 0315): without sorts, the
 * one plan left for the due rows walks the due index in order and stops at the limit (ADR 0300).
 * They are taken as an array (an InitPlan, run once) and the webhook is read per claimed row, so
 * the rows to update are found by primary key whatever the statistics say (a join with `webhooks`
 * let the planner scan the organization's deliveries instead). Exported for the backlog test.
 */
export const CLAIM_PLANNER = { enable_sort: 'off' } as const;
/** The claim's prepared statement (ADR 0255), only ever run on a connection with CLAIM_PLANNER. */
const CLAIM_STATEMENT = 'meld-messaging-claim-due-webhooks-in-order';

/**
 * The `webhook_deliveries` table (ADR 0155), also the queue of the attempts (ADR 0252). A
 * delivery is sent only while it is the oldest `pending` one of its message, by the one
 * attempt that claimed it (a lease as long as an attempt may take).
 */
@Injectable()
export class WebhookDeliveries implements OnApplicationShutdown {
  /** The claims' own connection, opened with CLAIM_PLANNER at the first claim (ADR 0315). */
  private claims?: Pool;

  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** After the dispatcher's last claim (its pump stops before any shutdown hook runs). */
  async onApplicationShutdown(): Promise<void> {
    await this.claims?.end();
    this.claims = undefined;
  }

  /** The messages among `smsIds` with a `pending` delivery: a later report of theirs queues behind it (ADR 0323). */
  async pendingOf(smsIds: readonly string[]): Promise<Set<string>> {
    const rows: Array<{ sms_id: string }> = await this.ds.query(
      `SELECT DISTINCT sms_id::text AS sms_id FROM webhook_deliveries WHERE status = 'pending' AND sms_id = ANY($1::uuid[])`,
      [smsIds],
    );
    return new Set(rows.map((r) => r.sms_id));
  }

  /**
   * Reports the outbox's first attempts did not deliver (ADR 0323), as deliveries the pump retries: a
   * failed first attempt (its outcome, its next attempt after the backoff, or `failed` when it
   * was the last chance) or one queued behind an earlier pending report of its message. The
   * event id is the row's id, so a report the outbox sends again (a pass run again) adds nothing.
   */
  async spill(rows: ReadonlyArray<SpilledReport>): Promise<void> {
    if (!rows.length) return;
    await this.ds.query(
      `INSERT INTO webhook_deliveries (id, organization_id, project_id, sms_id, body, status, attempts, last_status_code, last_error, next_attempt_at, retry_from)
       SELECT v.id, v."organizationId", v."projectId", v."smsId", v.body, v.status, v.attempts, v.code, v.error,
              now() + make_interval(secs => v."delaySeconds"), v."retryFrom"
         FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, "organizationId" uuid, "projectId" uuid, "smsId" uuid, body text, status text, attempts int,
              code int, error text, "delaySeconds" float8, "retryFrom" timestamptz, n int)
        ORDER BY v.n
       ON CONFLICT (id) DO NOTHING`,
      [numberedRows(rows)],
    );
  }

  /**
   * Claims up to `limit` due deliveries, each at the head of its message's line (no earlier
   * `pending` one) and unclaimed, with a lease as long as an attempt may take (ADR 0252): the
   * table is the queue. `SKIP LOCKED` lets replicas claim side by side without waiting on each
   * other's rows; a delivery whose earlier one another replica holds stays behind it.
   * The head-of-line test is a probe of the message's first pending `seq` (LIMIT 1 on the
   * `(sms_id, seq)` index): as a `NOT EXISTS` the planner, seeing few pending rows in its
   * statistics, joined every candidate against every pending row, a claim growing with the
   * square of the backlog (ADR 0275).
   */
  async claimDue(limit: number, leaseMs: number, retryForMs: number): Promise<ClaimedDelivery[]> {
    // Planned from statistics that saw few pending rows (a new table, a backlog grown since the last
    // ANALYZE), Postgres read and sorted every due row at each claim: 20 ms for 40 rows behind
    // 3,000 messages, 150 ms behind 21,000; walking the due index stops at `limit` (ADR 0300).
    // The setting is the connection's, so the claim is one statement in one round trip, its row
    // locks ending with it (ADR 0315).
    this.claims ??= settingsPool(this.ds, CLAIM_PLANNER);
    const { rows } = await this.claims.query<ClaimedDelivery>({ name: CLAIM_STATEMENT, text: CLAIM_DUE, values: [limit, leaseMs / 1000, retryForMs / 1000] });
    return rows;
  }

  /** Deliveries their receivers accepted, with the status code each answered. */
  async delivered(deliveries: ReadonlyArray<{ id: string; statusCode: number }>): Promise<void> {
    // Planned at each call (ADR 0275): a generic plan kept a hash join over the whole table.
    await planned(
      this.ds,
      `UPDATE webhook_deliveries d SET status = 'delivered', attempts = d.attempts + 1, last_status_code = v.code, last_error = NULL, delivered_at = now(),
              locked_until = NULL, updated_at = now()
         FROM unnest($1::uuid[], $2::int[]) AS v(id, code) WHERE d.id = v.id`,
      [deliveries.map((d) => d.id), deliveries.map((d) => d.statusCode)],
    );
  }

  /** A failed attempt: the next one after `delayMs`, or, with `final`, the delivery ends `failed`. */
  async attemptFailed(id: string, failure: { statusCode?: number; error: string; delayMs: number; final: boolean }): Promise<void> {
    await this.ds.query(
      `UPDATE webhook_deliveries SET attempts = attempts + 1, last_status_code = $2, last_error = $3, locked_until = NULL, updated_at = now(),
              status = CASE WHEN $5 THEN 'failed' ELSE status END, next_attempt_at = now() + make_interval(secs => $4)
        WHERE id = $1`,
      [id, failure.statusCode ?? null, failure.error.slice(0, 500), failure.delayMs / 1000, failure.final],
    );
  }

  /** Deletes up to `limit` deliveries delivered longer than `retentionMs` ago; pending and failed ones stay (ADR 0203). */
  async pruneDelivered(retentionMs: number, limit: number): Promise<number> {
    const [, deleted] = await this.ds.query(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries WHERE status = 'delivered' AND delivered_at < now() - make_interval(secs => $1) LIMIT $2)`,
      [retentionMs / 1000, limit],
    );
    return deleted;
  }
}

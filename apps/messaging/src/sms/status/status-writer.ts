import { errorSummary, Outputs } from '@meld/contracts';
import { beginWith, DATA_SOURCE, outboxTrace, suppressSms } from '@meld/db';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { escapeLiteral, type PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import { MicroBatcher, ok } from '../../batching/micro-batcher';
import { numberedRows } from '../../batching/numbered-rows';
import { type Queryable, WriteStatement } from '../../batching/write-statement';
import { INDEX_PLANS } from '../../db/index-plans';
import { type OutboxRow, outboxRow } from '../../outbox/outbox-row';
import { type OwedReport, owedReport, WebhookOutbox } from '../../webhooks/webhook-outbox';
import { NEXT_STATUSES, REFUNDED_STATUSES, reportedByWebhook, type SmsStatus } from './sms-status';
import { SmsOutboxRelay } from './sms-outbox-relay';
import { timelineEvent } from './timeline-event';

export interface StatusChange {
  status: SmsStatus;
  error?: string;
  smscMessageId?: string;
  /**
   * A `failed` the SMSC answered with a permanent destination error: the number is suppressed in
   * the change's transaction (ADR 0361). `phone` is the message's destination, `detail` the
   * command_status as text.
   */
  suppress?: { phone: string; detail: string };
}

/** The row of a message the writer needs. */
export interface StatusRow {
  id: string;
  project_id: string;
  organization_id: string;
  audience_id: string | null;
  sender_id: string;
  status: SmsStatus;
  messages_count: number;
  reserved_funds: string;
  /** The audience contact's oldest member, whose timeline gets the event (ADR 0157); null without one. */
  member_data_source_id: string | null;
  member_user_id: string | null;
}

/** One allowed change of one message, with when it happened. */
export interface StatusEntry {
  row: StatusRow;
  change: StatusChange;
  at: Date;
}

/** A change of the message `smsId`, or of the newest message the SMSC gave the id `smscId` (a receipt). */
interface PendingChange {
  smsId: string | null;
  smscId: string | null;
  change: StatusChange;
  at: Date;
}

/** A locked row; `receipt_of` is the SMSC id it was found by, when a receipt of the batch looked it up. */
type LockedRow = StatusRow & { receipt_of: string | null };

const uuidArray = (values: readonly string[]) => `ARRAY[${values.map(escapeLiteral).join(',')}]::uuid[]`;
const textArray = (values: readonly string[]) => `ARRAY[${values.map(escapeLiteral).join(',')}]::text[]`;

/**
 * The rows a status batch changes, locked in id order so two batches (or two processes) never
 * wait on each other in a cycle, with the contact's oldest member (ADR 0254). Receipts' messages
 * are found here by SMSC id (the newest message when an id repeats) rather than by a lookup of
 * their own before the batch (ADR 0316). Values are literals (escaped): the statement goes with
 * BEGIN in one round trip (`beginWith`), and is planned at each call for the table as it is then
 * (ADR 0275). Exported for the plans test.
 */
export function lockRowsSql(smsIds: readonly string[], smscIds: readonly string[]): string {
  const bySmsc = smscIds.length
    ? `WITH r AS MATERIALIZED (SELECT DISTINCT ON (smsc_message_id) smsc_message_id, id FROM sms_messages
                               WHERE smsc_message_id = ANY(${textArray(smscIds)}) ORDER BY smsc_message_id, created_at DESC)`
    : '';
  return `${bySmsc}
    SELECT m.id, m.project_id, m.organization_id, m.audience_id, m.sender_id, m.status, m.messages_count, m.reserved_funds::text,
           a.data_source_id AS member_data_source_id, a.user_id AS member_user_id, ${smscIds.length ? 'r.smsc_message_id' : 'NULL::text'} AS receipt_of
      FROM sms_messages m
      LEFT JOIN LATERAL (SELECT data_source_id, user_id FROM audience_members
                          WHERE project_id = m.project_id AND audience_id = m.audience_id ORDER BY seq LIMIT 1) a ON true
      ${smscIds.length ? 'LEFT JOIN r ON r.id = m.id' : ''}
     WHERE m.id = ANY(${uuidArray(smsIds)}${smscIds.length ? ' || ARRAY(SELECT id FROM r)' : ''}) ORDER BY m.id FOR UPDATE OF m`;
}

/**
 * Changes written per transaction at most, and transactions at once (ADR 0202): one, so what
 * arrives while a batch runs makes the next batch instead of a second small one (ADR 0300).
 */
const MAX_BATCH = 200;
const MAX_IN_FLIGHT = 1;

/**
 * Every status change of a direct SMS (ADR 0154): the message row, its history row, the
 * `meld.sms-status.v1` outbox row and its timeline event (ADR 0157), the report owed to the
 * organization's webhook (ADR 0323; every change after `enqueued`, ADR 0351) and, for `failed` /
 * `rejected`, the prepaid funds given back.
 * Changes arriving together share one transaction with one statement per table (ADR 0202),
 * each still answered only after its COMMIT. A change the current status does not allow (a
 * late or replayed receipt, a job run twice) changes nothing and answers false.
 */
@Injectable()
export class StatusWriter {
  private readonly log = new Logger('sms-status');
  private readonly batcher = new MicroBatcher<PendingChange, boolean | null>({
    run: (items) => this.changeBatch(items),
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
  });

  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: SmsOutboxRelay,
    private readonly webhooks: WebhookOutbox,
  ) {}

  async change(smsId: string, change: StatusChange): Promise<boolean> {
    return (await this.batcher.submit({ smsId, smscId: null, change, at: new Date() })) === true;
  }

  /**
   * A receipt's change, of the newest message with that SMSC id; null when there is none (yet: a
   * receipt can overtake the commit of its own `sent`). The message is found in the batch's
   * locking statement (ADR 0316).
   */
  changeBySmscId(smscId: string, change: StatusChange): Promise<boolean | null> {
    return this.batcher.submit({ smsId: null, smscId, change, at: new Date() });
  }

  /**
   * After the COMMIT of changes: their outbox rows, and their webhook reports when they owe any
   * (what `record` answered), go out now rather than at the next poll.
   */
  committed(reported = true): void {
    this.outbox.nudge();
    if (reported) this.webhooks.nudge();
  }

  /**
   * One transaction on the raw pool in three round trips (ADR 0316): BEGIN with the locking
   * statement, the write (prepared, on index plans: ADR 0322), COMMIT.
   */
  private async changeBatch(items: readonly PendingChange[]) {
    const smsIds = [...new Set(items.flatMap((i) => (i.smsId === null ? [] : [i.smsId])))];
    const smscIds = [...new Set(items.flatMap((i) => (i.smscId === null ? [] : [i.smscId])))];
    const tx = await beginWith<LockedRow>(this.ds, lockRowsSql(smsIds, smscIds), { settings: INDEX_PLANS });
    let answers: Array<boolean | null>;
    try {
      const current = new Map<string, StatusRow>();
      const bySmscId = new Map<string, string>();
      for (const { receipt_of, ...row } of tx.rows) {
        current.set(row.id, row);
        if (receipt_of !== null) bySmscId.set(receipt_of, row.id);
      }
      const entries: StatusEntry[] = [];
      answers = items.map(({ smsId: byId, smscId, change, at }) => {
        const smsId = byId ?? bySmscId.get(smscId!);
        const row = smsId === undefined ? undefined : current.get(smsId);
        if (!row) return byId === null ? null : false;
        if (!NEXT_STATUSES[row.status].includes(change.status)) return false;
        entries.push({ row, change, at });
        // A second change of the same message in this batch is checked against this one.
        current.set(row.id, { ...row, status: change.status, reserved_funds: REFUNDED_STATUSES.has(change.status) ? '0' : row.reserved_funds });
        return true;
      });
      if (entries.length) await this.applyChanges(tx.client, entries);
      await this.suppress(tx.client, entries);
      await tx.commit();
    } finally {
      await tx.release();
    }
    if (answers.includes(true)) this.committed();
    return answers.map((c) => ok(c));
  }

  /**
   * The suppressions of the batch's invalid destinations (ADR 0361), after its write: the row and
   * `_suppressed_sms` on the message's audience contact's messaging source contact. Only such a
   * failure writes anything here: a batch of normal changes runs no statement more. Under a
   * savepoint: a suppression that cannot be written (a deadlock, a store error) is lost alone and
   * the batch's changes commit; failing them would have their jobs submit their `sent` messages
   * again. The number fails again at its next send, which suppresses it then.
   */
  private async suppress(client: PoolClient, entries: readonly StatusEntry[]): Promise<void> {
    const invalid = entries.filter((e) => e.change.suppress);
    if (!invalid.length) return;
    const db = { query: async (text: string, values?: unknown[]) => (await client.query(text, values)).rows };
    await client.query('SAVEPOINT suppress');
    try {
      for (const { row, change } of invalid) {
        await suppressSms(db, row.project_id, { phone: change.suppress!.phone, reason: 'invalid_destination', detail: change.suppress!.detail, createdBy: 'automatic', audienceId: row.audience_id });
      }
      await client.query('RELEASE SAVEPOINT suppress');
    } catch (err) {
      await client.query('ROLLBACK TO SAVEPOINT suppress');
      this.log.warn(`suppressing ${invalid.length} invalid destination(s) failed; their messages are recorded failed: ${errorSummary(err)}`);
    }
  }

  /** Writes allowed changes of locked rows in one statement: the rows, the refunds, then what every change writes. */
  private async applyChanges(db: Queryable, entries: readonly StatusEntry[]): Promise<void> {
    const updates = entries.map(({ row, change, at }) => ({
      id: row.id,
      status: change.status,
      error: change.error ?? null,
      smsc: change.smscMessageId ?? null,
      at: at.toISOString(),
      refund: REFUNDED_STATUSES.has(change.status) && Number(row.reserved_funds) > 0,
      organization: row.organization_id,
      amount: row.reserved_funds,
    }));
    // One row per message: its last change, keeping an SMSC id an earlier change of the batch set.
    const last = new Map<string, (typeof updates)[number]>();
    for (const u of updates) {
      const before = last.get(u.id);
      last.set(u.id, { ...u, smsc: u.smsc ?? before?.smsc ?? null, refund: u.refund || Boolean(before?.refund) });
    }
    const write = new WriteStatement();
    write.add(
      `UPDATE sms_messages m SET status = v.status, error = v.error, smsc_message_id = COALESCE(v.smsc, m.smsc_message_id), updated_at = v.at,
              reserved_funds = CASE WHEN v.refund THEN 0 ELSE m.reserved_funds END
         FROM jsonb_to_recordset(${write.param(JSON.stringify([...last.values()]))}::jsonb) AS v(id uuid, status text, error text, smsc text, at timestamptz, refund boolean)
        WHERE m.id = v.id`,
    );
    const refunds = updates.filter((u) => u.refund);
    if (refunds.length) {
      write.add(
        `UPDATE organizations o SET funds = o.funds + r.total
           FROM (SELECT organization, sum(amount) AS total FROM jsonb_to_recordset(${write.param(JSON.stringify(refunds))}::jsonb) AS v(organization uuid, amount numeric) GROUP BY organization) r
          WHERE o.id = r.organization`,
      );
    }
    this.record(write, entries);
    await write.run(db);
  }

  /**
   * What every change writes (also the first `enqueued` of new messages, whose rows the send
   * is inserting): history, `meld.sms-status.v1` rows in `sms_outbox`, timeline events in `outbox`, webhook reports, each
   * table one part of the batch's write statement (ADR 0254), rows in the entries' order. The
   * initial `enqueued` owes no webhook report (ADR 0351: the 201 carries it); it keeps its
   * history and topic rows. Answers whether the entries owe any report.
   */
  record(write: WriteStatement, entries: readonly StatusEntry[]): boolean {
    write.add(
      `INSERT INTO sms_status_history (sms_id, status, error, at)
       SELECT v.sms_id, v.status, v.error, v.at
         FROM jsonb_to_recordset(${write.param(numberedRows(entries.map(({ row, change, at }) => ({ sms_id: row.id, status: change.status, error: change.error ?? null, at: at.toISOString() }))))}::jsonb)
              AS v(sms_id uuid, status text, error text, at timestamptz, n int)
        ORDER BY v.n`,
    );
    const outbox: OutboxRow[] = [];
    const timeline: OutboxRow[] = [];
    const reports: OwedReport[] = [];
    for (const entry of entries) {
      const { row, change, at } = entry;
      const status = outboxRow(Outputs.smsStatus, {
        schemaVersion: 1,
        projectId: row.project_id,
        smsId: row.id,
        audienceId: row.audience_id,
        status: change.status,
        messagesCount: row.messages_count,
        at: at.toISOString(),
        ...(change.error ? { error: change.error } : {}),
      });
      outbox.push(status);
      const event = timelineEvent(entry);
      if (event) timeline.push(event);
      if (reportedByWebhook(change.status)) reports.push(owedReport(row.organization_id, status.value));
    }
    const trace = write.param(outboxTrace());
    write.add(
      `INSERT INTO sms_outbox (topic, key, value, trace)
       SELECT v.topic, v.key, v.value, ${trace}::jsonb
         FROM jsonb_to_recordset(${write.param(numberedRows(outbox))}::jsonb) AS v(topic text, key text, value jsonb, n int) ORDER BY v.n`,
    );
    // Timeline events go to the shared `outbox`, each only while its source contact is live and
    // held FOR SHARE to the COMMIT (ADR 0039): a contact delete waits for this transaction and
    // then produces the rows before its erase marker; after the delete's COMMIT there is no event.
    if (timeline.length) {
      write.add(
        `WITH v AS MATERIALIZED (SELECT * FROM jsonb_to_recordset(${write.param(numberedRows(timeline))}::jsonb) AS v(topic text, key text, value jsonb, n int)),
              live AS MATERIALIZED (
                SELECT s.project_id, s.data_source_id, s.user_id FROM source_contacts s
                 WHERE (s.project_id, s.data_source_id, s.user_id) IN (SELECT (value->>'projectId')::uuid, (value->>'dataSourceId')::uuid, value->>'userId' FROM v)
                   AND s.deleted_at IS NULL AND s.version > 0
                 ORDER BY s.project_id, s.data_source_id, s.user_id FOR SHARE OF s)
         INSERT INTO outbox (topic, key, value, trace)
         SELECT v.topic, v.key, v.value, ${trace}::jsonb
           FROM v JOIN live ON live.project_id = (v.value->>'projectId')::uuid AND live.data_source_id = (v.value->>'dataSourceId')::uuid AND live.user_id = v.value->>'userId'
          ORDER BY v.n`,
      );
    }
    this.webhooks.record(write, reports);
    return reports.length > 0;
  }
}

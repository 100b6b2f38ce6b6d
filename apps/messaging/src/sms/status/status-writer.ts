import { type SmsStatusChange, Topics, keys, smsStatusChange } from '@meld/contracts';
import { DATA_SOURCE, outboxTrace } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { WebhookDeliveries } from '../../webhooks/webhook-deliveries.repository';
import { WebhookDispatcher } from '../../webhooks/webhook-dispatcher';
import { NEXT_STATUSES, REFUNDED_STATUSES, type SmsStatus } from './sms-status';
import { SmsOutboxRelay } from './sms-outbox-relay';
import { timelineEvent } from './timeline-event';

export interface StatusChange {
  status: SmsStatus;
  error?: string;
  smscMessageId?: string;
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
}

/**
 * Every status change of a direct SMS (ADR 0154) in one transaction: the message row, its
 * history row, the `meld.sms-status.v1` outbox row and its timeline event (ADR 0157), the
 * organization's webhook delivery
 * (ADR 0155) and, for `failed` / `rejected`, the prepaid funds given back. A change the current status does not allow (a late or replayed
 * receipt, a job run twice) changes nothing and returns false.
 */
@Injectable()
export class StatusWriter {
  constructor(
    @Inject(DATA_SOURCE) private readonly ds: DataSource,
    private readonly outbox: SmsOutboxRelay,
    private readonly webhooks: WebhookDispatcher,
    private readonly deliveries: WebhookDeliveries,
  ) {}

  async change(smsId: string, change: StatusChange): Promise<boolean> {
    const changed = await this.ds.transaction(async (em) => {
      const [row]: StatusRow[] = await em.query(
        `SELECT id, project_id, organization_id, audience_id, sender_id, status, messages_count, reserved_funds::text FROM sms_messages WHERE id = $1 FOR UPDATE`,
        [smsId],
      );
      if (!row || !NEXT_STATUSES[row.status].includes(change.status)) return false;
      await this.apply(em, row, change);
      return true;
    });
    if (changed) this.committed();
    return changed;
  }

  /** After the COMMIT of changes: their outbox rows and webhook deliveries go out now rather than at the next poll. */
  committed(): void {
    this.outbox.nudge();
    this.webhooks.nudge();
  }

  /** Writes an allowed change of a locked row (also the first `enqueued` of a new message). */
  async apply(em: EntityManager, row: StatusRow, change: StatusChange, at = new Date()): Promise<void> {
    const refund = REFUNDED_STATUSES.has(change.status) && Number(row.reserved_funds) > 0;
    await em.query(
      `UPDATE sms_messages SET status = $2, error = $3, smsc_message_id = COALESCE($4, smsc_message_id), updated_at = $5,
              reserved_funds = CASE WHEN $6 THEN 0 ELSE reserved_funds END
        WHERE id = $1`,
      [row.id, change.status, change.error ?? null, change.smscMessageId ?? null, at, refund],
    );
    if (refund) await em.query(`UPDATE organizations SET funds = funds + $2::numeric WHERE id = $1`, [row.organization_id, row.reserved_funds]);
    await em.query(`INSERT INTO sms_status_history (sms_id, status, error, at) VALUES ($1, $2, $3, $4)`, [row.id, change.status, change.error ?? null, at]);
    const message: SmsStatusChange = smsStatusChange.parse({
      schemaVersion: 1,
      projectId: row.project_id,
      smsId: row.id,
      audienceId: row.audience_id,
      status: change.status,
      messagesCount: row.messages_count,
      at: at.toISOString(),
      ...(change.error ? { error: change.error } : {}),
    });
    const trace = outboxTrace();
    await em.query(`INSERT INTO sms_outbox (topic, key, value, trace) VALUES ($1, $2, $3, $4)`, [Topics.smsStatus, keys.sms(row.project_id, row.id), JSON.stringify(message), trace]);
    const event = await timelineEvent(em, row, change, at);
    if (event) await em.query(`INSERT INTO sms_outbox (topic, key, value, trace) VALUES ($1, $2, $3, $4)`, [event.topic, event.key, JSON.stringify(event.value), trace]);
    // The payload of system design §4, in this field order.
    const report = { id: row.id, status: change.status, audienceId: row.audience_id, messagesCount: row.messages_count, at: message.at, ...(change.error ? { error: change.error } : {}) };
    await this.deliveries.record(em, { organizationId: row.organization_id, projectId: row.project_id, smsId: row.id, body: JSON.stringify(report) });
  }
}

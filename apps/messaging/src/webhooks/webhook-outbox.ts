import type { SmsStatusChange } from '@meld/contracts';
import { DATA_SOURCE, OutboxRelay, outboxTrace } from '@meld/db';
import { metricsRegistry } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { numberedRows } from '../batching/numbered-rows';
import type { WriteStatement } from '../batching/write-statement';
import { delivers } from '../messaging-role';
import { loadWebhookConfig } from './webhook-config';
import { WebhookDeliveries } from './webhook-deliveries.repository';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookPoster } from './webhook-poster';
import { webhookReport } from './webhook-report';
import { WebhookSender } from './webhook-sender';

/** A report owed to an organization's webhook: a row of `sms_webhook_outbox` (its `value`). */
export interface OwedReport {
  eventId: string;
  organizationId: string;
  projectId: string;
  smsId: string;
  status: SmsStatusChange['status'];
  /** The exact JSON that is signed and sent. */
  body: string;
  /** When the change happened: the retry window starts there. */
  at: string;
}

export function owedReport(organizationId: string, change: SmsStatusChange): OwedReport {
  const { eventId, body } = webhookReport(change);
  return { eventId, organizationId, projectId: change.projectId, smsId: change.smsId, status: change.status, body, at: change.at };
}

/** A pass that sent less than a full batch waits this long before the next, gathering reports (ADR 0296's reason). */
const LINGER_MS = 10;

/**
 * Delivery-report webhooks, first attempts (ADR 0323): every status change after the initial
 * `enqueued` (ADR 0351) writes the report its organization is owed to `sms_webhook_outbox`, in
 * the change's own transaction; in the
 * delivery processes a pump (the outbox machinery of ADR 0211, one pass at a time across
 * replicas, so a message's reports leave in order) makes each report's first attempt and
 * deletes the rows. What a first attempt does not deliver goes to `webhook_deliveries`, whose
 * dispatcher retries it (ADRs 0155, 0252); delivered reports leave no row behind.
 */
@Injectable()
export class WebhookOutbox implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly poster: WebhookPoster;
  private readonly relay: OutboxRelay;
  /** Read once at start: `nudge()` runs after every status batch's COMMIT. */
  private readonly delivering = delivers();

  constructor(@Inject(DATA_SOURCE) ds: DataSource, deliveries: WebhookDeliveries, dispatcher: WebhookDispatcher) {
    const config = loadWebhookConfig();
    this.poster = new WebhookPoster(config);
    const sender = new WebhookSender(ds, deliveries, this.poster, config, () => dispatcher.nudge());
    this.relay = new OutboxRelay(ds, sender, { table: 'sms_webhook_outbox', topic: 'sms-status webhooks', lingerMs: LINGER_MS, metrics: metricsRegistry });
  }

  /**
   * A part of the status changes' write (ADR 0254): the reports of organizations with a webhook,
   * in the changes' order (an organization without one is owed nothing).
   */
  record(write: WriteStatement, reports: readonly OwedReport[]): void {
    if (!reports.length) return;
    write.add(
      `INSERT INTO sms_webhook_outbox (key, value, trace)
       SELECT v."smsId", v.report, ${write.param(outboxTrace())}::jsonb
         FROM jsonb_to_recordset(${write.param(numberedRows(reports.map((r) => ({ smsId: r.smsId, organizationId: r.organizationId, report: r }))))}::jsonb)
              AS v("smsId" text, "organizationId" uuid, report jsonb, n int)
         JOIN webhooks w ON w.organization_id = v."organizationId" AND w.kind = 'sms-status'
        ORDER BY v.n`,
    );
  }

  /** Reports were just committed in this process: attempt them now. */
  nudge(): void {
    if (this.delivering) this.relay.nudge();
  }

  /** One pass (tests). */
  drainOnce(): Promise<number> {
    return this.relay.drainOnce();
  }

  // An `api` process writes reports and leaves their attempts to the delivery processes (ADR 0253).
  onApplicationBootstrap(): void {
    if (this.delivering) this.relay.onApplicationBootstrap();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.delivering) await this.relay.beforeApplicationShutdown();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.poster.close();
  }
}

import type { OutboxMessage, OutboxProducer } from '@meld/db';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { NO_SECRET, webhookAttempts } from './webhook-attempts';
import { retryDelayMs, type WebhookConfig } from './webhook-config';
import type { SpilledReport, WebhookDeliveries } from './webhook-deliveries.repository';
import type { WebhookPoster } from './webhook-poster';
import type { OwedReport } from './webhook-outbox';
import { signatureHeaders } from './webhook-signature';
import { WebhookTargets } from './webhook-targets';

/**
 * Messages whose reports are attempted at once in a pass (one message's reports go one after the
 * other): every message of a full pass (the pump's batch), as one pass runs at a time across
 * replicas and lasts as long as its slowest receiver; undici still opens at most 16 connections
 * per receiver (WebhookPoster).
 */
const CONCURRENCY = 500;
/**
 * After a failed first attempt, an organization's reports go straight to the retries for this
 * long, doubled at each failed first attempt after it up to an hour, until one succeeds (ADR
 * 0323): a receiver that hangs holds a pass for one timeout now and then, not every pass.
 */
const FAILING_FOR_MS = 30_000;
const FAILING_AT_MOST_MS = 3_600_000;

/**
 * The first attempt of each report in a pass of the webhook outbox (ADR 0323), the pump's
 * "producer": it resolves once every report was delivered or handed to `webhook_deliveries`,
 * and throws only when that hand-over failed (the pass then rolls back and runs again; reports
 * delivered meanwhile go again, with the same `webhook-id`). A report goes to the table, to be
 * retried by the dispatcher (ADR 0252), when its attempt failed, when an earlier report of its
 * message is still owed there (order per message), or while its organization is failing.
 */
export class WebhookSender implements OutboxProducer {
  private readonly log = new Logger('sms-webhook-outbox');
  private readonly targets: WebhookTargets;
  /** Organizations whose last first attempt failed: until when their reports skip them, after how many failures in a row. */
  private readonly failing = new Map<string, { until: number; failures: number }>();

  constructor(
    ds: DataSource,
    private readonly deliveries: WebhookDeliveries,
    private readonly poster: WebhookPoster,
    private readonly config: WebhookConfig,
    private readonly spilled: () => void,
    private readonly now: () => number = Date.now,
  ) {
    this.targets = new WebhookTargets(ds);
  }

  async send(_topic: string, messages: readonly OutboxMessage[]): Promise<void> {
    const chains = new Map<string, OwedReport[]>();
    for (const { value } of messages) {
      const report = value as OwedReport;
      const chain = chains.get(report.smsId);
      if (chain) chain.push(report);
      else chains.set(report.smsId, [report]);
    }
    // Any chain may queue behind a report of its message owed in the table, its first status
    // included: a `sent`, `failed` or `rejected` is a message's first report (ADR 0351), but an
    // `enqueued` one written by an older version (a rolling upgrade) may still be pending there.
    const owed = await this.deliveries.pendingOf([...chains.keys()]);
    const spills: SpilledReport[] = [];
    const queue = [...chains.values()];
    const worker = async () => {
      for (let chain = queue.shift(); chain; chain = queue.shift()) {
        let behind = owed.has(chain[0]!.smsId);
        for (const report of chain) {
          const spill = behind ? queued(report) : await this.attempt(report);
          if (spill) spills.push(spill);
          behind ||= spill?.status === 'pending';
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
    if (!spills.length) return;
    await this.deliveries.spill(spills);
    this.spilled();
  }

  /** The first attempt of a report: nothing more to do (null), or what the table keeps of it. */
  private async attempt(report: OwedReport): Promise<SpilledReport | null> {
    const target = await this.targets.of(report.organizationId);
    // The webhook was removed since the change: nothing to report to.
    if (!target) return null;
    const failing = this.failing.get(report.organizationId);
    if (failing && failing.until > this.now()) return queued(report);
    const result = target.secret
      ? await this.poster.post(target.url, report.body, signatureHeaders(report.eventId, report.body, target.secret))
      : { ok: false, error: NO_SECRET };
    if (result.ok) {
      this.failing.delete(report.organizationId);
      webhookAttempts.inc({ result: 'delivered' });
      return null;
    }
    const failures = (failing?.failures ?? 0) + 1;
    this.failing.set(report.organizationId, { until: this.now() + Math.min(FAILING_FOR_MS * 2 ** (failures - 1), FAILING_AT_MOST_MS), failures });
    if (this.failing.size > 10_000) this.failing.delete(this.failing.keys().next().value!);
    const lastChance = Date.parse(report.at) + this.config.retryForMs <= this.now();
    const error = (result.error ?? 'failed').slice(0, 500);
    webhookAttempts.inc({ result: lastChance ? 'failed' : 'retry' });
    if (lastChance) this.log.warn(`webhook delivery ${report.eventId} failed for good after 1 attempt: ${error}`);
    return { ...spilledOf(report), status: lastChance ? 'failed' : 'pending', attempts: 1, code: result.statusCode ?? null, error, delaySeconds: retryDelayMs(1) / 1000 };
  }
}

function spilledOf(report: OwedReport): Pick<SpilledReport, 'id' | 'organizationId' | 'projectId' | 'smsId' | 'body' | 'retryFrom'> {
  return { id: report.eventId, organizationId: report.organizationId, projectId: report.projectId, smsId: report.smsId, body: report.body, retryFrom: report.at };
}

/** A report not attempted here: the dispatcher sends it once it is at the head of its message's line. */
function queued(report: OwedReport): SpilledReport {
  return { ...spilledOf(report), status: 'pending', attempts: 0, code: null, error: null, delaySeconds: 0 };
}

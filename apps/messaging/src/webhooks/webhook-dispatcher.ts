import { errorSummary } from '@meld/contracts';
import { PostgresConnection } from '@meld/db';
import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { MicroBatcher, ok } from '../batching/micro-batcher';
import { NO_SECRET, webhookAttempts } from './webhook-attempts';
import { delivers } from '../messaging-role';
import { loadWebhookConfig, retryDelayMs, type WebhookConfig } from './webhook-config';
import { type ClaimedDelivery, WebhookDeliveries } from './webhook-deliveries.repository';
import { type PostResult, WebhookPoster } from './webhook-poster';
import { signatureHeaders } from './webhook-signature';

const POLL_EVERY_MS = 2000;
/** Attempts in flight at once per process. */
const CONCURRENCY = 50;
/**
 * Free slots a claim waits for while attempts are in flight: a claim reads every due pending
 * row, so under a backlog one per finished attempt cost Postgres more than the attempts
 * (ADR 0277); each finished attempt still nudges, and the claim runs once this many are free.
 */
const CLAIM_AT_LEAST = 10;
/** Delivered rows past their retention are deleted this often, this many per statement (ADR 0203). */
const PRUNE_EVERY_MS = 10 * 60_000;
const PRUNE_BATCH = 5000;
/**
 * Completions of attempts finishing together share one statement (ADR 0202); one at a time, so
 * those finishing meanwhile make the next batch instead of a second small one (ADR 0300).
 */
const WRITE_BATCH = { maxBatch: 200, maxInFlight: 1 };

/**
 * The retries of delivery-report webhooks (ADR 0155). The webhook outbox makes each report's first
 * attempt (ADR 0323); Postgres holds the reports it could not deliver and is their queue
 * (ADR 0252), as it is for an operator's retries: a pump claims the due deliveries with a
 * lease, one statement for all it can take, and posts them, up to CONCURRENCY at once; a
 * failed attempt sets the delivery's next attempt time (exponential backoff for the retry
 * window, 24 h by default). The pump runs on a nudge after each spill and each
 * finished attempt, at the next retry this process scheduled, and every two seconds for what
 * another process wrote or an operator retried. Per message, one delivery at a time and in
 * order: the next is claimable once the one before it is delivered or has failed for good.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly log = new Logger('sms-webhooks');
  private readonly config: WebhookConfig = loadWebhookConfig();
  private readonly poster = new WebhookPoster(this.config);
  private timer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private retryTimer?: { at: number; timer: NodeJS.Timeout };
  private pumping?: Promise<void>;
  private again = false;
  /** True until Postgres is connected (ADR 0283) and again from shutdown on: nudges do nothing. */
  private stopped = true;
  private shuttingDown = false;
  private readonly sending = new Set<Promise<void>>();
  private readonly completions = new MicroBatcher<{ id: string; statusCode: number }, void>({
    ...WRITE_BATCH,
    run: async (deliveries) => {
      await this.deliveries.delivered(deliveries);
      return deliveries.map(() => ok(undefined));
    },
  });

  constructor(
    private readonly deliveries: WebhookDeliveries,
    private readonly postgres: PostgresConnection,
  ) {}

  onApplicationBootstrap(): void {
    // An `api` process leaves the attempts to the delivery processes (ADR 0253): its nudges do nothing.
    if (!delivers()) return;
    // Postgres may still be connecting (DbModule connects in the background): a pass before it could only fail (ADR 0283).
    void this.postgres.connected.then(() => this.start());
  }

  private start(): void {
    if (this.shuttingDown) return;
    this.stopped = false;
    this.timer = setInterval(() => this.nudge(), POLL_EVERY_MS);
    this.pruneTimer = setInterval(() => void this.prune().catch((err: Error) => this.log.warn(`prune: ${errorSummary(err)}`)), PRUNE_EVERY_MS);
    this.nudge();
  }

  /** Deletes the deliveries delivered longer ago than the retention; answers how many. */
  async prune(): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.deliveries.pruneDelivered(this.config.deliveredRetentionMs, PRUNE_BATCH);
      total += deleted;
      if (deleted < PRUNE_BATCH || this.stopped) return total;
    }
  }

  /** The pump and the attempts stop before any store closes (their last writes still land). */
  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.pruneTimer);
    clearTimeout(this.retryTimer?.timer);
    await this.pumping;
    while (this.sending.size) await Promise.allSettled([...this.sending]);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.poster.close();
  }

  /** Claims and sends the due deliveries soon; calls while a pass runs make one more pass. */
  nudge(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump()
      .catch((err: Error) => this.log.warn(`pump: ${errorSummary(err)}`))
      .finally(() => {
        this.pumping = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.nudge();
        }
      });
  }

  private async pump(): Promise<void> {
    const room = CONCURRENCY - this.sending.size;
    // Few free slots: each attempt that finishes nudges again, until a claim is worth its read.
    if (room < CLAIM_AT_LEAST) return;
    const claimed = await this.deliveries.claimDue(room, this.config.timeoutMs + 5000, this.config.retryForMs);
    for (const delivery of claimed) {
      const sent: Promise<void> = this.attempt(delivery)
        .catch((err: Error) => this.log.warn(`webhook attempt: ${errorSummary(err)}`))
        .finally(() => {
          this.sending.delete(sent);
          this.nudge();
        });
      this.sending.add(sent);
    }
  }

  /** One attempt of a claimed delivery. One that throws (a store down) keeps its lease: it is claimed again once the lease has passed. */
  private async attempt(claimed: ClaimedDelivery): Promise<void> {
    const result: PostResult = claimed.secret
      ? await this.poster.post(claimed.url, claimed.body, signatureHeaders(claimed.id, claimed.body, claimed.secret))
      : { ok: false, error: NO_SECRET };
    if (result.ok) {
      await this.completions.submit({ id: claimed.id, statusCode: result.statusCode! });
      webhookAttempts.inc({ result: 'delivered' });
      return;
    }
    const delayMs = retryDelayMs(claimed.attempts + 1);
    await this.deliveries.attemptFailed(claimed.id, { statusCode: result.statusCode, error: result.error ?? 'failed', delayMs, final: claimed.lastChance });
    if (claimed.lastChance) {
      webhookAttempts.inc({ result: 'failed' });
      this.log.warn(`webhook delivery ${claimed.id} failed for good after ${claimed.attempts + 1} attempts: ${result.error}`);
      return;
    }
    webhookAttempts.inc({ result: 'retry' });
    this.wakeAt(Date.now() + delayMs);
  }

  /** A pass when the earliest retry this process scheduled is due (the poll would find it up to POLL_EVERY_MS later). */
  private wakeAt(at: number): void {
    if (this.stopped || (this.retryTimer && this.retryTimer.at <= at)) return;
    clearTimeout(this.retryTimer?.timer);
    const timer = setTimeout(() => {
      this.retryTimer = undefined;
      this.nudge();
    }, Math.max(0, at - Date.now()));
    timer.unref();
    this.retryTimer = { at, timer };
  }
}

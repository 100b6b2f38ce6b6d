import { metricsRegistry } from '@meld/platform';
import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { type Job, Queue, Worker } from 'bullmq';
import { Counter } from 'prom-client';
import { MicroBatcher, ok } from '../batching/micro-batcher';
import { BullmqConnections } from '../queue/bullmq-connections';
import { loadWebhookConfig, retryDelayMs, type WebhookConfig } from './webhook-config';
import { type ClaimedDelivery, WebhookDeliveries } from './webhook-deliveries.repository';
import { type PostResult, WebhookPoster } from './webhook-poster';
import { signatureHeaders } from './webhook-signature';

export const WEBHOOK_QUEUE = 'meld-sms-webhooks';
interface AttemptJob {
  deliveryId: string;
  /** Attempts made before this one: the job sends only while the row still says so. */
  attempt: number;
}

const POLL_EVERY_MS = 2000;
/** Reports are always signed; the column allows no secret, so an attempt says what to fix. */
const NO_SECRET = 'the webhook has no secret: set one with PUT /admin/v1/organizations/{org}/webhooks/sms-status';
const DUE_BATCH = 500;
/** Delivered rows past their retention are deleted this often, this many per statement (ADR 0203). */
const PRUNE_EVERY_MS = 10 * 60_000;
const PRUNE_BATCH = 5000;
/**
 * A pass does not add again an attempt this process queued less than this long ago (ADR
 * 0202): every pass used to re-add every due delivery still waiting in the queue. After it,
 * the attempt is added again (a no-op while its job exists), which still recovers a job
 * Redis lost.
 */
const REQUEUE_AFTER_MS = 30_000;
/** Claims and completions of attempts running together share one statement (ADR 0202). */
const WRITE_BATCH = { maxBatch: 200, maxInFlight: 2 };
const attempts = new Counter({
  name: 'meld_messaging_webhook_attempts_total',
  help: 'Delivery-report webhook attempts by result (delivered, retry, failed)',
  labelNames: ['result'],
  registers: [metricsRegistry],
});

/**
 * Delivery-report webhooks (ADR 0155). Postgres holds each delivery from the status change's
 * own transaction; a BullMQ job per attempt sends it (a delayed job per retry: exponential
 * backoff for the retry window, 24 h by default). A pump queues what is due: on a nudge after
 * each status change, and every two seconds for what another process wrote or an operator
 * retried, and for a job Redis lost. Per message, one delivery at a time and in order: the
 * next is queued when the one before it is delivered or has failed for good.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly log = new Logger('sms-webhooks');
  private readonly config: WebhookConfig = loadWebhookConfig();
  private readonly connections = new BullmqConnections();
  private readonly queue = new Queue<AttemptJob>(WEBHOOK_QUEUE, { connection: this.connections.connection() });
  private readonly poster = new WebhookPoster(this.config);
  private worker?: Worker<AttemptJob>;
  private timer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private pumping?: Promise<void>;
  private again = false;
  private stopped = false;
  /** Job ids this process queued, with when they become due; another replica's worker may run them, so entries also expire. */
  private readonly queued = new Map<string, number>();
  private readonly claims = new MicroBatcher<{ id: string; attempt: number }, ClaimedDelivery | null>({
    ...WRITE_BATCH,
    run: async (attempts) => {
      const claimed = await this.deliveries.claim(attempts, this.config.timeoutMs + 5000, this.config.retryForMs);
      return attempts.map((a) => ok(claimed.get(a.id) ?? null));
    },
  });
  private readonly completions = new MicroBatcher<{ id: string; statusCode: number }, void>({
    ...WRITE_BATCH,
    run: async (deliveries) => {
      await this.deliveries.delivered(deliveries);
      return deliveries.map(() => ok(undefined));
    },
  });

  constructor(private readonly deliveries: WebhookDeliveries) {
    this.queue.on('error', (err) => this.log.warn(`queue: ${err.message}`));
  }

  onApplicationBootstrap(): void {
    this.worker = new Worker<AttemptJob>(WEBHOOK_QUEUE, (job) => this.attempt(job), { connection: this.connections.connection(), concurrency: 50 });
    this.worker.on('error', (err) => this.log.warn(`worker: ${err.message}`));
    this.worker.on('failed', (_job, err) => this.log.warn(`attempt job: ${err.message}`));
    this.timer = setInterval(() => this.nudge(), POLL_EVERY_MS);
    this.pruneTimer = setInterval(() => void this.prune().catch((err: Error) => this.log.warn(`prune: ${err.message}`)), PRUNE_EVERY_MS);
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

  /** Attempts and the pump stop before any store closes (their last writes still land). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.pruneTimer);
    await this.worker?.close();
    await this.pumping;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
    await this.poster.close();
    await this.connections.closeAll();
  }

  /** Queues the due deliveries soon; calls while a pass runs make one more pass. */
  nudge(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump()
      .catch((err: Error) => this.log.warn(`pump: ${err.message}`))
      .finally(() => {
        this.pumping = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.nudge();
        }
      });
  }

  private async pump(): Promise<void> {
    const due = await this.deliveries.due(DUE_BATCH);
    const now = Date.now();
    for (const [jobId, dueAt] of this.queued) if (now - dueAt > REQUEUE_AFTER_MS) this.queued.delete(jobId);
    const jobs = due.map((d) => this.job(d.id, d.attempts)).filter((j) => !this.queued.has(j.opts.jobId));
    if (!jobs.length) return;
    await this.queue.addBulk(jobs);
    for (const j of jobs) this.queued.set(j.opts.jobId, now);
  }

  private job(deliveryId: string, attempt: number, delay = 0) {
    // One job id per attempt: the pump and a retry adding the same attempt queue it once. An
    // attempt that threw (a store down mid-attempt) frees its id, so the pump queues it again
    // once its lease has passed.
    return { name: 'attempt', data: { deliveryId, attempt }, opts: { jobId: `${deliveryId}_${attempt}`, delay, removeOnComplete: true, removeOnFail: true } };
  }

  private async attempt(job: Job<AttemptJob>): Promise<void> {
    const { deliveryId, attempt } = job.data;
    if (job.id) this.queued.delete(job.id);
    const claimed = await this.claims.submit({ id: deliveryId, attempt });
    if (!claimed) return;
    const result: PostResult = claimed.secret
      ? await this.poster.post(claimed.url, claimed.body, signatureHeaders(claimed.id, claimed.body, claimed.secret))
      : { ok: false, error: NO_SECRET };
    if (result.ok) {
      await this.completions.submit({ id: claimed.id, statusCode: result.statusCode! });
      attempts.inc({ result: 'delivered' });
      this.nudge();
      return;
    }
    const delayMs = retryDelayMs(attempt + 1);
    const made = await this.deliveries.attemptFailed(claimed.id, { statusCode: result.statusCode, error: result.error ?? 'failed', delayMs, final: claimed.lastChance });
    if (claimed.lastChance) {
      attempts.inc({ result: 'failed' });
      this.log.warn(`webhook delivery ${claimed.id} failed for good after ${made} attempts: ${result.error}`);
      this.nudge();
      return;
    }
    attempts.inc({ result: 'retry' });
    const { name, data, opts } = this.job(claimed.id, made, delayMs);
    await this.queue.add(name, data, opts);
    this.queued.set(opts.jobId, Date.now() + delayMs);
  }
}

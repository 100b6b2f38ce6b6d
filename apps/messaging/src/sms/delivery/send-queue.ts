import { inConsumerSpan } from '@meld/kafka';
import { envVars, loadConfig, RetryLaterException } from '@meld/platform';
import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { type Job, Queue, Worker } from 'bullmq';
import type Redis from 'ioredis';
import { z } from 'zod';
import { MicroBatcher, ok } from '../../batching/micro-batcher';
import { InboundKeywords } from '../../inbound/inbound-keywords';
import { delivers } from '../../messaging-role';
import { BullmqConnections } from '../../queue/bullmq-connections';
import { SmsRepository, type SubmitRow } from '../sms.repository';
import { StatusWriter } from '../status/status-writer';
import { receiptStatus } from '../status/sms-status';
import { type Receipt, SmscClient, SubmitRefused } from './smsc-client';

export const SEND_QUEUE = 'meld-sms-send';
export interface SendJob {
  smsId: string;
  /** The request's `traceparent` and `x-request-id` (ADR 0187); absent for a sweep's re-queue. */
  trace?: Record<string, string>;
}

/** Retries of a submit the SMSC could not take (no session, busy): ~4 minutes in all (ADR 0153). */
const ATTEMPTS = 8;
const RECOVERY_EVERY_MS = 30_000;
/** Retry-After of a send refused because the queue did not answer, as the gateway's for its own Redis (ADR 0122). */
const QUEUE_RETRY_AFTER_S = 5;
/** How often the jobs of stored messages whose add failed are added again (ADR 0284). */
const READD_EVERY_MS = 1000;
/**
 * Reads of jobs arriving together share one statement (ADR 0202); one at a time, so those
 * arriving meanwhile make the next batch instead of a second small one (ADR 0300).
 */
const READ_BATCH = { maxBatch: 200, maxInFlight: 1 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Delivery of direct SMS (ADR 0153): a BullMQ queue in Redis (a job per message, its id the
 * SMS id, so adding twice queues once), a worker that submits over the app's SMPP session and
 * records `sent` / `failed` / `rejected`, and the receipts that follow. Postgres stays the
 * record: a message still `enqueued` without a job (the process died between COMMIT and the
 * add, or Redis lost it) is queued again by a periodic sweep.
 */
@Injectable()
export class SendQueue implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly log = new Logger('sms-send');
  private readonly queue: Queue<SendJob>;
  private worker?: Worker<SendJob>;
  private readonly smsc: SmscClient;
  private sweepTimer?: NodeJS.Timeout;
  private readonly connections = new BullmqConnections();
  private readonly producer: Redis;
  /** The check under way, shared by the batches that want one meanwhile. */
  private checking?: Promise<RetryLaterException | undefined>;
  /** Jobs of committed messages whose add failed, by SMS id, added again every READD_EVERY_MS. */
  private readonly unqueued = new Map<string, SendJob>();
  private readdTimer?: NodeJS.Timeout;
  private readding = false;
  private readonly submitRows = new MicroBatcher<string, SubmitRow | null>({
    ...READ_BATCH,
    run: async (ids) => {
      const rows = await this.repo.forSubmit(ids);
      return ids.map((id) => ok(rows.get(id) ?? null));
    },
  });

  constructor(
    private readonly repo: SmsRepository,
    private readonly status: StatusWriter,
    inbound: InboundKeywords,
  ) {
    const { MELD_SMSC_URL } = loadConfig(z.object({ MELD_SMSC_URL: envVars.smscUrl.default('smpp://127.0.0.1:52775') }));
    this.producer = this.connections.producer('meld-messaging-queue');
    this.queue = new Queue<SendJob>(SEND_QUEUE, { connection: this.producer });
    this.queue.on('error', (err) => this.log.warn(`queue: ${err.message}`));
    this.smsc = new SmscClient({ url: MELD_SMSC_URL, onReceipt: (r) => this.onReceipt(r), onInbound: (sms) => inbound.receive(sms) });
  }

  onApplicationBootstrap(): void {
    // An `api` process only queues (ADR 0253).
    if (!delivers()) return;
    this.smsc.start();
    this.worker = new Worker<SendJob>(SEND_QUEUE, (job) => this.traced(job), { connection: this.connections.worker('meld-messaging-worker'), concurrency: 50 });
    this.worker.on('error', (err) => this.log.warn(`worker: ${err.message}`));
    this.worker.on('failed', (job, err) => void this.onFailed(job, err));
    this.sweepTimer = setInterval(() => void this.sweep().catch((err: Error) => this.log.warn(`sweep: ${err.message}`)), RECOVERY_EVERY_MS);
  }

  /** The worker and the session stop while the database is still open: a running job still records its status. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.sweepTimer);
    clearInterval(this.readdTimer);
    await this.worker?.close();
    await this.smsc.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
    await this.connections.closeAll();
  }

  /**
   * Whether the queue can take jobs now: a PING on the queue's own connection (within
   * MELD_REDIS_TIMEOUT_MS), then BullMQ's set-up of that connection, which follows its first
   * connect and settles within the same bound. A send stores nothing unless it can (ADR 0284):
   * this answers the error to send back otherwise. Batches that ask while a check is under way
   * share it.
   */
  checkReachable(): Promise<RetryLaterException | undefined> {
    this.checking ??= this.producer
      .ping()
      .then(() => this.queue.waitUntilReady())
      .then(() => undefined, () => new RetryLaterException('the send queue (Redis) did not answer in time; nothing was stored: retry later', QUEUE_RETRY_AFTER_S))
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  /**
   * Queues just committed messages. An add that fails (Redis stopped answering after the check,
   * within MELD_REDIS_TIMEOUT_MS) does not fail the send, whose rows are committed: its jobs are
   * added again every second until Redis takes them, so they do not wait for the sweep (ADR 0284).
   */
  async addCommitted(jobs: readonly SendJob[]): Promise<void> {
    try {
      await this.addMany(jobs);
    } catch (err) {
      this.log.warn(`queueing ${jobs.length} stored SMS failed, adding them again every second: ${(err as Error).message}`);
      for (const job of jobs) this.unqueued.set(job.smsId, job);
      this.readdTimer ??= setInterval(() => void this.readd(), READD_EVERY_MS);
    }
  }

  private async readd(): Promise<void> {
    if (this.readding) return;
    this.readding = true;
    const jobs = [...this.unqueued.values()];
    try {
      await this.addMany(jobs);
      for (const job of jobs) this.unqueued.delete(job.smsId);
      if (!this.unqueued.size) {
        clearInterval(this.readdTimer);
        this.readdTimer = undefined;
      }
    } catch {
      // Still unanswered: the next tick tries again; a process that stops first leaves them to the sweep.
    } finally {
      this.readding = false;
    }
  }

  /** Queues messages in one Redis round trip (idempotent: a job id is its SMS id); fails after MELD_REDIS_TIMEOUT_MS when Redis does not answer. */
  async addMany(jobs: readonly SendJob[]): Promise<void> {
    if (!jobs.length) return;
    await this.queue.addBulk(
      jobs.map((data) => ({
        name: 'send',
        data,
        opts: { jobId: data.smsId, attempts: ATTEMPTS, backoff: { type: 'exponential' as const, delay: 1000 }, removeOnComplete: true, removeOnFail: { age: 86_400 } },
      })),
    );
  }

  /** Re-queues messages left `enqueued` longer than a sweep period. */
  async sweep(olderThanMs = RECOVERY_EVERY_MS): Promise<number> {
    const ids = await this.repo.staleEnqueued(olderThanMs);
    await this.releaseFailedJobs(ids);
    await this.addMany(ids.map((smsId) => ({ smsId })));
    return ids.length;
  }

  /**
   * A message still `enqueued` may have a job in BullMQ's failed set without `failed` recorded:
   * a job that stalled more than `maxStalledCount` times (its worker killed twice while holding
   * it), or whose `failed` could not be written. Its id stays taken for a day, so adding it
   * again would be a no-op and the message never sent: the job is removed first (ADR 0268).
   */
  private async releaseFailedJobs(ids: readonly string[]): Promise<void> {
    const states = await Promise.all(ids.map((id) => this.queue.getJobState(id)));
    const failed = ids.filter((_, i) => states[i] === 'failed');
    if (!failed.length) return;
    this.log.warn(`re-queuing ${failed.length} enqueued SMS whose job had failed`);
    await Promise.all(failed.map((id) => this.queue.remove(id)));
  }

  /** The job under the context of the request that queued it: one trace from the POST to the submit. */
  private traced(job: Job<SendJob>): Promise<void> {
    if (!job.data.trace) return this.process(job);
    return inConsumerSpan(`${SEND_QUEUE} process`, { 'messaging.system': 'bullmq', 'messaging.destination.name': SEND_QUEUE }, job.data.trace, () => this.process(job));
  }

  private async process(job: Job<SendJob>): Promise<void> {
    const sms = await this.submitRows.submit(job.data.smsId);
    if (!sms || sms.status !== 'enqueued') return;
    // Consent can change between the request and the job (system design §4): refuse late, as `rejected`.
    if (sms.optedOut) {
      await this.status.change(sms.id, { status: 'rejected', error: 'opted_out' });
      return;
    }
    let smscMessageId: string;
    try {
      smscMessageId = await this.smsc.submit({ source: sms.source, destination: sms.destination, text: sms.text, encoding: sms.encoding, messagesCount: sms.messagesCount });
    } catch (err) {
      if (err instanceof SubmitRefused) {
        await this.status.change(sms.id, { status: 'failed', error: err.message });
        return;
      }
      throw err;
    }
    await this.status.change(sms.id, { status: 'sent', smscMessageId });
  }

  private async onFailed(job: Job<SendJob> | undefined, err: Error): Promise<void> {
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    this.log.warn(`giving up on an SMS after ${job.attemptsMade} attempts: ${err.message}`);
    await this.status.change(job.data.smsId, { status: 'failed', error: `not submitted: ${err.message}` }).catch((e: Error) => this.log.warn(`could not record failed: ${e.message}`));
  }

  /**
   * The receipt's change, its message found by SMSC id in the status batch (ADR 0316). A receipt
   * can overtake the `sent` commit of its own submit (another process, or the response and the
   * receipt read in one go): a short wait for the id before asking the SMSC to resend it.
   */
  private async onReceipt(receipt: Receipt): Promise<void> {
    const status = receiptStatus(receipt.stat);
    if (!status) return;
    const change = { status, ...(receipt.error ? { error: receipt.error } : {}) };
    for (let attempt = 0; ; attempt++) {
      if ((await this.status.changeBySmscId(receipt.messageId, change)) !== null) return;
      if (attempt >= 10) throw new Error(`no SMS with SMSC id ${receipt.messageId}`);
      await sleep(100);
    }
  }

  smscBound(): boolean {
    return this.smsc.isBound();
  }
}

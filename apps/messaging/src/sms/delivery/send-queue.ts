import { inConsumerSpan, traceHeaders } from '@meld/kafka';
import { envVars, loadConfig } from '@meld/platform';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { type Job, Queue, Worker } from 'bullmq';
import { z } from 'zod';
import { InboundKeywords } from '../../inbound/inbound-keywords';
import { BullmqConnections } from '../../queue/bullmq-connections';
import { SmsRepository } from '../sms.repository';
import { StatusWriter } from '../status/status-writer';
import { receiptStatus } from '../status/sms-status';
import { type Receipt, SmscClient, SubmitRefused } from './smsc-client';

export const SEND_QUEUE = 'meld-sms-send';
interface SendJob {
  smsId: string;
  /** The request's `traceparent` and `x-request-id` (ADR 0187); absent for a sweep's re-queue. */
  trace?: Record<string, string>;
}

/** Retries of a submit the SMSC could not take (no session, busy): ~4 minutes in all (ADR 0153). */
const ATTEMPTS = 8;
const RECOVERY_EVERY_MS = 30_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Delivery of direct SMS (ADR 0153): a BullMQ queue in Redis (a job per message, its id the
 * SMS id, so adding twice queues once), a worker that submits over the app's SMPP session and
 * records `sent` / `failed` / `rejected`, and the receipts that follow. Postgres stays the
 * record: a message still `enqueued` without a job (the process died between COMMIT and the
 * add, or Redis lost it) is queued again by a periodic sweep.
 */
@Injectable()
export class SendQueue implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('sms-send');
  private readonly queue: Queue<SendJob>;
  private worker?: Worker<SendJob>;
  private readonly smsc: SmscClient;
  private sweepTimer?: NodeJS.Timeout;
  private readonly connections = new BullmqConnections();

  constructor(
    private readonly repo: SmsRepository,
    private readonly status: StatusWriter,
    inbound: InboundKeywords,
  ) {
    const { MELD_SMSC_URL } = loadConfig(z.object({ MELD_SMSC_URL: envVars.smscUrl.default('smpp://127.0.0.1:52775') }));
    this.queue = new Queue<SendJob>(SEND_QUEUE, { connection: this.connections.connection() });
    this.queue.on('error', (err) => this.log.warn(`queue: ${err.message}`));
    this.smsc = new SmscClient({ url: MELD_SMSC_URL, onReceipt: (r) => this.onReceipt(r), onInbound: (sms) => inbound.receive(sms) });
  }

  onApplicationBootstrap(): void {
    this.smsc.start();
    this.worker = new Worker<SendJob>(SEND_QUEUE, (job) => this.traced(job), { connection: this.connections.connection(), concurrency: 50 });
    this.worker.on('error', (err) => this.log.warn(`worker: ${err.message}`));
    this.worker.on('failed', (job, err) => void this.onFailed(job, err));
    this.sweepTimer = setInterval(() => void this.sweep().catch((err: Error) => this.log.warn(`sweep: ${err.message}`)), RECOVERY_EVERY_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.sweepTimer);
    await this.worker?.close();
    await this.smsc.stop();
    await this.queue.close();
    await this.connections.closeAll();
  }

  /** Queues a committed message (idempotent: the job id is the SMS id). */
  async add(smsId: string): Promise<void> {
    await this.queue.add('send', { smsId, trace: traceHeaders() }, { jobId: smsId, attempts: ATTEMPTS, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: { age: 86_400 } });
  }

  /** Re-queues messages left `enqueued` longer than a sweep period. */
  async sweep(olderThanMs = RECOVERY_EVERY_MS): Promise<number> {
    const ids = await this.repo.staleEnqueued(olderThanMs);
    for (const id of ids) await this.add(id);
    return ids.length;
  }

  /** The job under the context of the request that queued it: one trace from the POST to the submit. */
  private traced(job: Job<SendJob>): Promise<void> {
    if (!job.data.trace) return this.process(job);
    return inConsumerSpan(`${SEND_QUEUE} process`, { 'messaging.system': 'bullmq', 'messaging.destination.name': SEND_QUEUE }, job.data.trace, () => this.process(job));
  }

  private async process(job: Job<SendJob>): Promise<void> {
    const sms = await this.repo.forSubmit(job.data.smsId);
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
   * A receipt can overtake the `sent` commit of its own submit (another process, or the
   * response and the receipt read in one go): a short wait for the id before asking the
   * SMSC to resend it.
   */
  private async onReceipt(receipt: Receipt): Promise<void> {
    const status = receiptStatus(receipt.stat);
    if (!status) return;
    for (let attempt = 0; ; attempt++) {
      const smsId = await this.repo.idBySmscId(receipt.messageId);
      if (smsId) {
        await this.status.change(smsId, { status, ...(receipt.error ? { error: receipt.error } : {}) });
        return;
      }
      if (attempt >= 10) throw new Error(`no SMS with SMSC id ${receipt.messageId}`);
      await sleep(100);
    }
  }

  smscBound(): boolean {
    return this.smsc.isBound();
  }
}

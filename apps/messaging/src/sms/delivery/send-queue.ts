import { errorSummary, LoggableError } from '@meld/contracts';
import { inConsumerSpan } from '@meld/kafka';
import { envVars, loadConfig, metricsRegistry, RetryLaterException } from '@meld/platform';
import { type BeforeApplicationShutdown, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { type Job, Queue, Worker } from 'bullmq';
import type Redis from 'ioredis';
import { Counter } from 'prom-client';
import { z } from 'zod';
import { MicroBatcher, ok } from '../../batching/micro-batcher';
import { InboundKeywords } from '../../inbound/inbound-keywords';
import { SmsRedaction } from '../../audience/sms-redaction';
import { delivers } from '../../messaging-role';
import { BullmqConnections } from '../../queue/bullmq-connections';
import { SmsRepository, type SubmitRow } from '../sms.repository';
import { StatusWriter } from '../status/status-writer';
import { receiptStatus } from '../status/sms-status';
import { type Receipt, SmscClient, type SmscState, SubmitRefused } from './smsc-client';
import { notSubmittedError } from './not-submitted';

export const SEND_QUEUE = 'meld-sms-send';
/** One message of a send job. */
export interface SendMessage {
  smsId: string;
  /** The request's `traceparent` and `x-request-id` (ADR 0187); absent for a sweep's re-queue. */
  trace?: Record<string, string>;
}
/** A job's data: the messages of one send batch (ADR 0324), or one message, as jobs were queued before it. */
export type SendJob = { messages: SendMessage[] } | SendMessage;
/** A job to queue: `id` is the `send_job` of its messages' rows, or the one message's id for a row from before ADR 0324. */
export interface QueuedJob {
  id: string;
  messages: SendMessage[];
}
/** BullMQ states in which a job will still run its messages: the sweep leaves them to it. */
const LIVE_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

/** Retries of a submit the SMSC could not take (no session, busy): ~4 minutes in all (ADR 0153). */
const ATTEMPTS = 8;
const RECOVERY_EVERY_MS = 30_000;
/** Retry-After of a send refused because the queue did not answer, as the gateway's for its own Redis (ADR 0122). */
const QUEUE_RETRY_AFTER_S = 5;
/** How often the jobs of stored messages whose add failed are added again (ADR 0284). */
const READD_EVERY_MS = 1000;
/**
 * Jobs a delivery process runs at once. A job holds a send batch (one message at light load,
 * tens at peak): enough for single-message jobs to keep the SMPP window full, few enough that a
 * replica does not take a peak's whole backlog from the others.
 */
const CONCURRENCY = 32;
/**
 * The reads of jobs starting together share one statement (ADR 0202); one at a time, so those
 * starting meanwhile make the next read instead of a second small one (ADR 0300).
 */
const READ_BATCH = { maxBatch: 20, maxInFlight: 1 };
/**
 * submit_sm_resp statuses that say the destination itself is wrong for good (SMPP 3.4 §5.1.3): the
 * number is suppressed (ADR 0361). Any other refusal (ESME_RSUBMITFAIL, a provider's) is not.
 */
const INVALID_DESTINATION = new Map([
  [0x0b, 'ESME_RINVDSTADR (0x0b)'],
  [0x50, 'ESME_RINVDSTTON (0x50)'],
  [0x51, 'ESME_RINVDSTNPI (0x51)'],
]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Created by the first delivery process's queue; tests start several apps in one registry.
const strangers = () =>
  (metricsRegistry.getSingleMetric('meld_messaging_send_unknown_messages_total') as Counter | undefined) ??
  new Counter({
    name: 'meld_messaging_send_unknown_messages_total',
    help: 'Messages of send jobs that this database does not hold: deleted with their project, or another Meld shares this Redis database and its jobs are taken here (ADR 0153)',
    registers: [metricsRegistry],
  });

/** A receipt whose SMSC message id no SMS has (yet): the SMSC is asked to resend it. The id is the SMSC's, no contact data. */
class ReceiptUnmatched extends LoggableError {}

/**
 * Delivery of direct SMS (ADR 0153): a BullMQ queue in Redis, a job per send batch (ADR 0324:
 * its id is the `send_job` the batch's rows were stored with, so adding it twice queues once and
 * a message is only ever in that job), a worker that submits its messages over the app's SMPP
 * session and records `sent` / `failed` / `rejected`, and the receipts that follow. Postgres
 * stays the record: a message still `enqueued` whose job is gone or failed (the process died
 * between COMMIT and the add, or Redis lost it) is queued again by a periodic sweep.
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
  /** Jobs of committed messages whose add failed, by job id, added again every READD_EVERY_MS. */
  private readonly unqueued = new Map<string, QueuedJob>();
  private readonly submitRows = new MicroBatcher<readonly string[], ReadonlyMap<string, SubmitRow>>({
    ...READ_BATCH,
    run: async (jobs) => {
      const rows = await this.repo.forSubmit(jobs.flat());
      return jobs.map(() => ok(rows));
    },
  });
  private readdTimer?: NodeJS.Timeout;
  private readding = false;

  constructor(
    private readonly repo: SmsRepository,
    private readonly status: StatusWriter,
    private readonly redaction: SmsRedaction,
    inbound: InboundKeywords,
  ) {
    const { MELD_SMSC_URL } = loadConfig(z.object({ MELD_SMSC_URL: envVars.smscUrl.default('smpp://127.0.0.1:52775') }));
    this.producer = this.connections.producer('meld-messaging-queue');
    this.queue = new Queue<SendJob>(SEND_QUEUE, { connection: this.producer });
    this.queue.on('error', (err) => this.log.warn(`queue: ${errorSummary(err)}`));
    this.smsc = new SmscClient({ url: MELD_SMSC_URL, onReceipt: (r) => this.onReceipt(r), onInbound: (sms) => inbound.receive(sms) });
  }

  onApplicationBootstrap(): void {
    // An `api` process only queues (ADR 0253).
    if (!delivers()) return;
    this.smsc.start();
    this.worker = new Worker<SendJob>(SEND_QUEUE, (job) => this.process(job), { connection: this.connections.worker('meld-messaging-worker'), concurrency: CONCURRENCY });
    this.worker.on('error', (err) => this.log.warn(`worker: ${errorSummary(err)}`));
    this.worker.on('failed', (job, err) => void this.onFailed(job, err));
    this.sweepTimer = setInterval(() => void this.sweep().catch((err: Error) => this.log.warn(`sweep: ${errorSummary(err)}`)), RECOVERY_EVERY_MS);
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
  async addCommitted(job: QueuedJob): Promise<void> {
    try {
      await this.addMany([job]);
    } catch (err) {
      this.log.warn(`queueing ${job.messages.length} stored SMS failed, adding them again every second: ${errorSummary(err)}`);
      this.unqueued.set(job.id, job);
      this.readdTimer ??= setInterval(() => void this.readd(), READD_EVERY_MS);
    }
  }

  private async readd(): Promise<void> {
    if (this.readding) return;
    this.readding = true;
    const jobs = [...this.unqueued.values()];
    try {
      await this.addMany(jobs);
      for (const job of jobs) this.unqueued.delete(job.id);
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

  /**
   * Queues jobs in one Redis round trip (idempotent: a job's id is its messages' `send_job`);
   * fails after MELD_REDIS_TIMEOUT_MS when Redis does not answer. A send batch's one job goes by
   * `add`: `addBulk` builds an ioredis pipeline carrying every BullMQ script, per call (ADR 0295).
   */
  async addMany(jobs: readonly QueuedJob[]): Promise<void> {
    const options = (id: string) => ({ jobId: id, attempts: ATTEMPTS, backoff: { type: 'exponential' as const, delay: 1000 }, removeOnComplete: true, removeOnFail: { age: 86_400 } });
    if (jobs.length === 1) await this.queue.add('send', { messages: jobs[0]!.messages }, options(jobs[0]!.id));
    else if (jobs.length) await this.queue.addBulk(jobs.map(({ id, messages }) => ({ name: 'send', data: { messages }, opts: options(id) })));
  }

  /**
   * Re-queues messages left `enqueued` longer than a sweep period whose job will not run them:
   * gone (never added, lost by Redis, completed) or failed. A job still waiting, delayed or
   * running keeps its messages, so a message is never in two jobs (ADR 0324). A failed job stays
   * in BullMQ's failed set for a day without `failed` recorded on its messages (it stalled more
   * than `maxStalledCount` times, or the write of `failed` did not happen); its id would stay
   * taken, so it is removed first (ADR 0268). Answers the number of messages queued again.
   */
  async sweep(olderThanMs = RECOVERY_EVERY_MS): Promise<number> {
    const byJob = new Map<string, SendMessage[]>();
    for (const { id, sendJob } of await this.repo.staleEnqueued(olderThanMs)) {
      const jobId = sendJob ?? id;
      const messages = byJob.get(jobId) ?? [];
      messages.push({ smsId: id });
      byJob.set(jobId, messages);
    }
    const jobs = [...byJob].map(([id, messages]) => ({ id, messages }));
    const states = await Promise.all(jobs.map(({ id }) => this.queue.getJobState(id)));
    const requeued: QueuedJob[] = [];
    const ended: string[] = [];
    jobs.forEach((job, i) => {
      if (LIVE_STATES.has(states[i]!)) return;
      requeued.push(job);
      if (states[i] !== 'unknown') ended.push(job.id);
    });
    if (ended.length) this.log.warn(`re-queuing the enqueued SMS of ${ended.length} send job(s) that had failed or ended without them`);
    await Promise.all(ended.map((id) => this.queue.remove(id)));
    await this.addMany(requeued);
    return requeued.reduce((n, job) => n + job.messages.length, 0);
  }

  /** Submits a job's messages together; any left for a retry (no session, SMSC busy) fails the job once all settled, and BullMQ runs it again later. */
  private async process(job: Job<SendJob>): Promise<void> {
    const messages = 'messages' in job.data ? job.data.messages : [job.data];
    const rows = await this.submitRows.submit(messages.map((m) => m.smsId));
    // Messages go only with their project: a job naming ones this database lacks is, but for that, another
    // deployment's, queued on the same Redis database; its sweep re-queues them, each job taken here delays them (ADR 0153).
    const unknown = messages.filter((m) => !rows.has(m.smsId)).length;
    if (unknown) {
      strangers().inc(unknown);
      this.log.warn(`send job ${job.id}: ${unknown} of its ${messages.length} SMS are not in this database (deleted with their project, or another Meld shares this Redis database, MELD_REDIS_URL, and its jobs are taken here)`);
    }
    const outcomes = await Promise.allSettled(messages.map((m) => this.traced(m, rows.get(m.smsId))));
    const retried = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as Error] : []));
    // The first reason stands for all: they share the session (a `failed` after the last attempt records it).
    if (retried.length) throw retried[0]!;
  }

  /** A message under the context of the request that queued it: one trace from the POST to the submit. */
  private traced(message: SendMessage, sms: SubmitRow | undefined): Promise<void> {
    if (!message.trace) return this.submit(sms);
    return inConsumerSpan(`${SEND_QUEUE} process`, { 'messaging.system': 'bullmq', 'messaging.destination.name': SEND_QUEUE }, message.trace, () => this.submit(sms));
  }

  /** One message of a job: nothing when it is no longer `enqueued` (a retried or re-queued job); throws what should be tried again. */
  private async submit(sms: SubmitRow | undefined): Promise<void> {
    if (!sms || sms.status !== 'enqueued') return;
    // Deleted since the request: its number is being forgotten (ADR 0358), nothing goes to it. Redacted
    // first (a no-op when the tombstone's redaction reached it): a retry after a failure does both.
    if (sms.contactDeleted) {
      await this.redaction.redactMessages([sms.id]);
      await this.status.change(sms.id, { status: 'rejected', error: 'contact_deleted' });
      return;
    }
    // Suppressed since the request (ADR 0361): as an opt-out, refused late.
    if (sms.suppressed) {
      await this.status.change(sms.id, { status: 'rejected', error: 'suppressed' });
      return;
    }
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
        const invalid = INVALID_DESTINATION.get(err.commandStatus);
        await this.status.change(sms.id, { status: 'failed', error: err.message, ...(invalid ? { suppress: { phone: sms.destination, detail: invalid } } : {}) });
        return;
      }
      throw err;
    }
    await this.status.change(sms.id, { status: 'sent', smscMessageId });
  }

  /** After a job's last attempt: its messages not yet submitted become `failed` (those that were keep their status: the change is refused). */
  private async onFailed(job: Job<SendJob> | undefined, err: Error): Promise<void> {
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    const messages = 'messages' in job.data ? job.data.messages : [job.data];
    this.log.warn(`giving up on a send job of ${messages.length} SMS after ${job.attemptsMade} attempts: ${errorSummary(err)}`);
    const error = notSubmittedError(err);
    await Promise.all(
      messages.map(({ smsId }) => this.status.change(smsId, { status: 'failed', error }).catch((e: Error) => this.log.warn(`could not record failed: ${errorSummary(e)}`))),
    );
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
      if (attempt >= 10) throw new ReceiptUnmatched(`no SMS with SMSC id ${receipt.messageId}`);
      await sleep(100);
    }
  }

  /** The SMPP session's state, for readiness (ADR 0348). */
  smscState(): SmscState {
    return this.smsc.state();
  }
}

import { errorSummary, REQUEST_ID_HEADER, safeErrorMessage } from '@meld/contracts';
import type { IHeaders } from 'kafkajs';
import type { ZodType } from 'zod';
import { backoffDelay, sleep as realSleep, type BackoffOptions } from './backoff';
import { decodeValue } from './codec';
import { Message } from './consumed-message';
import type { DeadLetterRecord, DeadLetterSink } from './dead-letter';
import { headerString, type DeadLetterReason } from './headers';
import { KeyScheduler } from './key-scheduler';
import { silentLogger, type Logger } from './logger';
import { isTransientStoreError } from './store-errors';
import { StorePause } from './store-pause';
import { OffsetTracker } from './offset-tracker';
import { outcomeOf, outcomeOfError, type HandlerOutcome } from './outcome';
import type { Ticker } from './ticker';
import { inMessageSpan, tracingOn } from './trace-context';

/** A decoded, validated message as a handler sees it. */
export interface ConsumedMessage<T> {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly value: T;
  readonly headers: IHeaders;
  readonly schemaVersion: number | undefined;
  /** Broker timestamp, ms since the epoch as a string (kafkajs's form). */
  readonly timestamp: string;
  /** 1 on the first try, 2 on the first retry, … Redeliveries after a restart start at 1 again. */
  readonly attempt: number;
}

export type MessageHandler<T> = (message: ConsumedMessage<T>) => Promise<HandlerOutcome | void> | HandlerOutcome | void;

/** One subscribed topic: its schema and its handler. */
export interface TopicHandler<T = unknown> {
  topic: string;
  schema: ZodType<T>;
  handle: MessageHandler<T>;
  /** Defaults to `<topic>.dlq`. */
  deadLetterTopic?: string;
}

/** Builds a TopicHandler with `T` inferred from the schema. */
export function topicHandler<T>(handler: TopicHandler<T>): TopicHandler<T> {
  return handler;
}

/** The fields of a kafkajs message the processor reads (so tests can build batches by hand). */
export interface RawMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: IHeaders;
  timestamp: string;
}

export interface BatchInput {
  topic: string;
  partition: number;
  messages: readonly RawMessage[];
}

/** What the processor needs from kafkajs's eachBatch payload. */
export interface BatchControl {
  resolveOffset(offset: string): void;
  heartbeat(): Promise<void>;
  /** True once a seek or rebalance made the rest of this batch obsolete. */
  isStale(): boolean;
}

export interface ProcessOptions {
  group: string;
  /** Keys with asynchronous work in flight at once within one partition's batch. */
  concurrency: number;
  backoff: BackoffOptions;
  /** Heartbeat (and publish progress) this often while a batch runs; below the session timeout / 3. */
  heartbeatIntervalMs: number;
  /** The runner's shared timer at heartbeatIntervalMs; without one the batch makes its own. */
  ticker?: Ticker;
  deadLetterTopic: string;
  sink: DeadLetterSink;
  logger?: Logger;
  /** Transient store errors pause and retry without bound; default isTransientStoreError (ADR 0111). */
  isTransient?: (error: Error) => boolean;
  /** True once the runner is stopping: a paused batch gives up, its unfinished rest is redelivered. */
  stopping?: () => boolean;
  /** Called with true when the batch pauses for its store, false when it resumes (a gauge). */
  onPause?: (paused: boolean) => void;
  /** Injectable for tests. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface BatchResult {
  processed: number;
  /** Handler attempts that did not succeed (retries and rejections). */
  failedAttempts: number;
  deadLettered: Record<DeadLetterReason, number>;
  /** Messages at the start of the batch that are done (their offsets were resolved). */
  completed: number;
  /** Why processing stopped early, if it did; the unfinished rest is redelivered. */
  aborted: false | 'stale' | 'heartbeat' | 'stopping';
}

/**
 * Processes one partition's batch, in offset order: decode and validate each message (an
 * invalid one is set aside for the dead-letter topic), hand valid ones to the handler with
 * per-key order kept and different keys concurrent (`concurrency` keys in flight), retry with
 * backoff, dead-letter what cannot succeed, and resolve offsets only up to the last message
 * before which everything is done (handled, or acknowledged by the dead-letter topic).
 *
 * Resolving (not committing) is all it does with offsets: kafkajs commits the resolved
 * offsets after the batch returns, and also when it throws, so progress survives a crash
 * without ever committing past an unfinished message.
 *
 * Decoding happens as messages are dispatched rather than in a pass of its own: a decoded
 * value then dies young unless its handler keeps it, instead of living for the whole batch
 * (kafka benchmark, single runs: the runner's extra consume CPU over plain kafkajs fell
 * from ~2.1 to ~0.7 µs per message with this change).
 */
export function processBatch<T>(batch: BatchInput, handler: TopicHandler<T>, control: BatchControl, options: ProcessOptions): Promise<BatchResult> {
  return new BatchRun(batch, handler, control, options).run();
}

/** One partition batch being processed: the state processBatch's steps share. */
class BatchRun<T> {
  private readonly messages: readonly RawMessage[];
  private readonly logger: Logger;
  private readonly sleep: (ms: number) => Promise<void>;
  // Checked once per batch: with tracing off a message costs no span and no context (ADR 0187).
  private readonly traced = tracingOn();
  private readonly result: BatchResult = {
    processed: 0,
    failedAttempts: 0,
    deadLettered: { invalid: 0, rejected: 0, 'retries-exhausted': 0 },
    completed: 0,
    aborted: false,
  };
  private readonly tracker: OffsetTracker;
  private readonly pause: StorePause;
  private readonly isTransient: (error: Error) => boolean;
  /** Invalid messages, set aside: done once the dead-letter topic has them (one produce call per batch). */
  private readonly invalid: Array<{ index: number; record: DeadLetterRecord }> = [];
  private resolvedIndex = -1;
  private heartbeatError: unknown;
  private sinceStaleCheck = 0;

  constructor(
    private readonly batch: BatchInput,
    private readonly handler: TopicHandler<T>,
    private readonly control: BatchControl,
    private readonly options: ProcessOptions,
  ) {
    this.messages = batch.messages;
    this.logger = options.logger ?? silentLogger;
    this.sleep = options.sleep ?? realSleep;
    this.tracker = new OffsetTracker(batch.messages.length);
    this.isTransient = options.isTransient ?? isTransientStoreError;
    this.pause = this.storePause();
  }

  async run(): Promise<BatchResult> {
    if (this.messages.length === 0) return this.result;
    const stopTicking = this.startTicking();
    const scheduler = new KeyScheduler<number>(
      this.options.concurrency,
      (i) => this.processOne(i),
      (i) => this.keyOf(i),
      () => this.shouldContinue(true),
    );
    let failure: unknown;
    try {
      await this.dispatch(scheduler);
      if (this.invalid.length > 0 && !scheduler.failed && !this.result.aborted) await this.deadLetterInvalid();
    } catch (err) {
      failure = err;
    }
    // Whatever happened, nothing keeps running behind the caller's back.
    try {
      await scheduler.drain();
    } catch (err) {
      failure ??= err;
    }
    stopTicking();
    // A stale batch belongs to a partition that moved or was seeked: its offsets are not ours to resolve.
    if (this.result.aborted !== 'stale') this.resolveProgress();
    this.result.completed = this.tracker.contiguous;
    if (failure !== undefined) throw failure;
    if (this.heartbeatError !== undefined) throw this.heartbeatError;
    return this.result;
  }

  /** Hands the messages to the scheduler in offset order until done or aborted. */
  private async dispatch(scheduler: KeyScheduler<number>): Promise<void> {
    let waited = false;
    for (let i = 0; i < this.messages.length; i++) {
      // Lost the group or the partition: leave the rest to whoever owns it now.
      if (scheduler.failed || !this.shouldContinue(waited)) break;
      // The store is down: dispatch nothing new until the probe gets an answer.
      const paused = this.pause.paused;
      if (paused) {
        await paused;
        if (this.givingUp() || !this.shouldContinue(true)) break;
      }
      const wait = scheduler.submit(i);
      waited = wait !== undefined;
      if (waited) await wait;
    }
  }

  /** Bad messages: to the dead-letter topic in one produce call, then they count as done. */
  private async deadLetterInvalid(): Promise<void> {
    const { topic, partition } = this.batch;
    await this.options.sink.send(
      this.options.deadLetterTopic,
      this.invalid.map((x) => x.record),
    );
    for (const x of this.invalid) this.tracker.complete(x.index);
    this.result.deadLettered.invalid = this.invalid.length;
    this.logger.warn({ topic, partition, count: this.invalid.length, firstError: this.invalid[0].record.error }, 'invalid messages dead-lettered');
  }

  private resolveProgress(): void {
    const idx = this.tracker.committableIndex;
    if (idx > this.resolvedIndex) {
      this.control.resolveOffset(this.messages[idx].offset);
      this.resolvedIndex = idx;
    }
  }

  /**
   * A heartbeat timer keeps the group membership alive through slow handlers and backoffs,
   * and publishes progress so a crash mid-batch does not redo finished work.
   */
  private startTicking(): () => void {
    const tick = (): void => {
      this.resolveProgress();
      this.control.heartbeat().catch((err: unknown) => {
        this.heartbeatError ??= err;
        this.result.aborted = 'heartbeat';
      });
    };
    if (this.options.ticker) return this.options.ticker.register(tick);
    const timer = setInterval(tick, this.options.heartbeatIntervalMs);
    return () => clearInterval(timer);
  }

  /**
   * kafkajs's isStale() builds a JSON key per call (~0.5 µs: the biggest per-message cost in
   * the runner's first profile). A batch turns stale only when other code runs (a rebalance, a
   * seek), so checking after every await and every STALE_CHECK_EVERY synchronous messages is enough.
   */
  private shouldContinue(afterAwait = false): boolean {
    if (this.result.aborted) return false;
    if (afterAwait || ++this.sinceStaleCheck >= STALE_CHECK_EVERY) {
      this.sinceStaleCheck = 0;
      if (this.control.isStale()) this.result.aborted = 'stale';
    }
    return !this.result.aborted;
  }

  /** True once the batch must give up (stale, group lost, runner stopping); sets `aborted` for stopping. */
  private givingUp(): boolean {
    if (!this.result.aborted && this.options.stopping?.()) this.result.aborted = 'stopping';
    return this.result.aborted !== false;
  }

  private done(i: number): true {
    this.result.processed++;
    this.tracker.complete(i);
    return true;
  }

  private storePause(): StorePause {
    const { topic, partition } = this.batch;
    const { options, logger } = this;
    return new StorePause({
      initialDelayMs: options.backoff.initialDelayMs,
      maxDelayMs: options.backoff.maxDelayMs,
      sleep: this.sleep,
      random: options.random ?? Math.random,
      onPause: (error) => {
        options.onPause?.(true);
        logger.warn({ topic, partition, group: options.group, err: safeErrorMessage(error) }, 'store unavailable: partition paused, retrying until it answers');
      },
      onResume: (pausedMs, probes) => {
        options.onPause?.(false);
        logger.warn({ topic, partition, group: options.group, pausedMs, probes }, 'store answered: partition resumed');
      },
    });
  }

  private record(raw: RawMessage, reason: DeadLetterReason, error: string, attempts: number): DeadLetterRecord {
    const { topic, partition } = this.batch;
    return { topic, partition, offset: raw.offset, key: raw.key, value: raw.value, headers: raw.headers, reason, error, attempts };
  }

  /** Keys are decoded only for scheduling when some key has asynchronous work in flight. */
  private keyOf(i: number): string | null {
    const key = this.messages[i].key;
    return key === null ? null : key.toString('utf8');
  }

  /** The value of a message, or INVALID when it was set aside for the dead-letter topic. */
  private decode(i: number): T | typeof INVALID {
    const raw = this.messages[i];
    // The common case inline (no result object); decodeValue explains a failure.
    const parsed = raw.value === null ? undefined : parseJson(raw.value);
    const checked = parsed === NOT_JSON || parsed === undefined ? undefined : this.handler.schema.safeParse(parsed);
    if (checked?.success) return checked.data;
    const decoded = decodeValue(raw.value, this.handler.schema);
    if (decoded.ok) return decoded.value;
    this.invalid.push({ index: i, record: this.record(raw, 'invalid', decoded.error, 0) });
    return INVALID;
  }

  private invoke(message: Message<T>, raw: RawMessage): ReturnType<MessageHandler<T>> {
    return this.traced ? inMessageSpan(this.batch.topic, this.options.group, raw.headers, () => this.handler.handle(message)) : this.handler.handle(message);
  }

  /**
   * Decodes, validates and handles one message: true when done, false when it stopped
   * unfinished (batch aborted). Synchronous while the handler is: a handler that returns
   * without a promise costs no microtask, which keeps the runner near plain kafkajs speed.
   */
  private processOne(i: number): boolean | Promise<boolean> {
    const raw = this.messages[i];
    const value = this.decode(i);
    if (value === INVALID) return true;
    const message = new Message<T>(this.batch.topic, this.batch.partition, raw, value, 1);
    let returned: ReturnType<MessageHandler<T>>;
    try {
      returned = this.invoke(message, raw);
    } catch (err) {
      return this.failed(i, message, outcomeOfError(err));
    }
    if (returned === undefined) return this.done(i); // the usual synchronous success
    if (isPromise<HandlerOutcome | void>(returned)) {
      return returned.then(
        (r) => {
          const outcome = outcomeOf(r);
          return outcome.kind === 'ok' ? this.done(i) : this.failed(i, message, outcome);
        },
        (err: unknown) => this.failed(i, message, outcomeOfError(err)),
      );
    }
    const outcome = outcomeOf(returned);
    return outcome.kind === 'ok' ? this.done(i) : this.failed(i, message, outcome);
  }

  /**
   * The slow path. A transient store error pauses the batch and retries for as long as the
   * store is down, never dead-letters (ADR 0111); any other failure is retried with backoff
   * up to maxAttempts, then dead-lettered.
   */
  private async failed(i: number, first: Message<T>, firstOutcome: HandlerOutcome): Promise<boolean> {
    const raw = this.messages[i];
    const token = {};
    let message = first;
    let outcome = firstOutcome;
    let failures = 0;
    try {
      for (;;) {
        if (outcome.kind === 'ok') return this.done(i);
        this.result.failedAttempts++;
        const transient = outcome.kind === 'retry' && this.isTransient(outcome.error);
        // Any other answer means the store is up again: a pause this message probed ends.
        if (!transient) this.pause.answered(token);
        if (!transient) failures++;
        const reason = this.deadLetterReason(outcome, transient, failures);
        if (reason) return await this.deadLetter(i, message, reason, outcome.error);
        if (this.givingUp()) return false;
        await this.waitBeforeRetry(token, raw, message, outcome.error, transient, failures);
        if (this.givingUp()) return false;
        message = message.withAttempt(message.attempt + 1);
        outcome = await this.retry(message, raw);
      }
    } finally {
      // Done, dead-lettered or given up: a pause this message probed is over for the others.
      this.pause.answered(token);
    }
  }

  private deadLetterReason(outcome: HandlerOutcome, transient: boolean, failures: number): DeadLetterReason | undefined {
    if (outcome.kind === 'dead-letter') return 'rejected';
    if (!transient && failures >= this.options.backoff.maxAttempts) return 'retries-exhausted';
    return undefined;
  }

  private async deadLetter(i: number, message: Message<T>, reason: DeadLetterReason, error: Error): Promise<true> {
    const { topic, partition } = this.batch;
    const raw = this.messages[i];
    await this.options.sink.send(this.options.deadLetterTopic, [this.record(raw, reason, errorText(error), message.attempt)]);
    this.result.deadLettered[reason]++;
    this.logger.warn(
      // Not the key (it holds a user id: a phone or an email) nor a message that may quote the value (ADR 0338).
      { topic, partition, offset: raw.offset, reason, attempts: message.attempt, err: safeErrorMessage(error), requestId: headerString(raw.headers, REQUEST_ID_HEADER) },
      'message dead-lettered',
    );
    this.tracker.complete(i);
    return true;
  }

  private async waitBeforeRetry(token: object, raw: RawMessage, message: Message<T>, error: Error, transient: boolean, failures: number): Promise<void> {
    if (transient) return this.pause.beforeRetry(token, error);
    const delay = backoffDelay(failures, this.options.backoff, this.options.random);
    this.logger.debug({ topic: this.batch.topic, partition: this.batch.partition, offset: raw.offset, attempt: message.attempt, delay, err: errorSummary(error) }, 'handler failed, retrying');
    await this.sleep(delay);
  }

  private async retry(message: Message<T>, raw: RawMessage): Promise<HandlerOutcome> {
    try {
      return outcomeOf(await this.invoke(message, raw));
    } catch (err) {
      return outcomeOfError(err);
    }
  }
}

const NOT_JSON = Symbol('not JSON');
const INVALID = Symbol('invalid message');

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return NOT_JSON;
  }
}

/** Synchronous messages between two isStale() checks. */
const STALE_CHECK_EVERY = 64;

function isPromise<V>(value: unknown): value is Promise<V> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/** `Name: message`; the stack stays in the logs, a header only needs to say what went wrong. */
function errorText(error: Error): string {
  return `${error.name}: ${error.message}`;
}

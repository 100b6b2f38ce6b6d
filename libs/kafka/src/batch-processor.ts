import type { IHeaders } from 'kafkajs';
import type { ZodType } from 'zod';
import { backoffDelay, sleep as realSleep, type BackoffOptions } from './backoff';
import { decodeValue, schemaVersionOf } from './codec';
import type { DeadLetterRecord, DeadLetterSink } from './dead-letter';
import type { DeadLetterReason } from './headers';
import { KeyScheduler } from './key-scheduler';
import { silentLogger, type Logger } from './logger';
import { OffsetTracker } from './offset-tracker';
import { outcomeOf, outcomeOfError, type HandlerOutcome } from './outcome';

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
  deadLetterTopic: string;
  sink: DeadLetterSink;
  logger?: Logger;
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
  aborted: false | 'stale' | 'heartbeat';
}

const INVALID = Symbol('invalid');

/**
 * Processes one partition's batch: decode and validate every message, dead-letter the
 * invalid ones, run the rest through the handler in offset order per key (in order within a key,
 * `concurrency` keys at once), retry with backoff, dead-letter what cannot succeed, and
 * resolve offsets only up to the last message before which everything is done.
 *
 * Resolving (not committing) is all it does with offsets: kafkajs commits the resolved
 * offsets after the batch returns, and also when it throws, so progress survives a crash
 * without ever committing past an unfinished message.
 */
export async function processBatch<T>(
  batch: BatchInput,
  handler: TopicHandler<T>,
  control: BatchControl,
  options: ProcessOptions,
): Promise<BatchResult> {
  const { topic, partition, messages } = batch;
  const n = messages.length;
  const logger = options.logger ?? silentLogger;
  const sleep = options.sleep ?? realSleep;
  const result: BatchResult = {
    processed: 0,
    failedAttempts: 0,
    deadLettered: { invalid: 0, rejected: 0, 'retries-exhausted': 0 },
    completed: 0,
    aborted: false,
  };
  if (n === 0) return result;

  const tracker = new OffsetTracker(n);
  let resolvedIndex = -1;
  const resolveProgress = (): void => {
    const idx = tracker.committableIndex;
    if (idx > resolvedIndex) {
      control.resolveOffset(messages[idx].offset);
      resolvedIndex = idx;
    }
  };

  // 1. Decode and validate. Keys are decoded only when needed (a key with work in flight,
  // or a handler reading message.key): most of the time nobody needs the string.
  const keys = new Array<string | null | undefined>(n);
  const keyOf = (i: number): string | null => {
    let key = keys[i];
    if (key === undefined) {
      const raw = messages[i].key;
      key = keys[i] = raw === null ? null : raw.toString('utf8');
    }
    return key;
  };
  const values = new Array<T | typeof INVALID>(n);
  const invalid: Array<{ index: number; record: DeadLetterRecord }> = [];
  for (let i = 0; i < n; i++) {
    const raw = messages[i];
    const decoded = decodeValue(raw.value, handler.schema);
    if (decoded.ok) values[i] = decoded.value;
    else {
      values[i] = INVALID;
      invalid.push({ index: i, record: record(raw, 'invalid', decoded.error, 0) });
    }
  }

  function record(raw: RawMessage, reason: DeadLetterReason, error: string, attempts: number): DeadLetterRecord {
    return { topic, partition, offset: raw.offset, key: raw.key, value: raw.value, headers: raw.headers, reason, error, attempts };
  }

  // 2. Bad messages go to the dead-letter topic before anything else, in one produce call.
  if (invalid.length > 0) {
    await options.sink.send(
      options.deadLetterTopic,
      invalid.map((x) => x.record),
    );
    for (const x of invalid) tracker.complete(x.index);
    result.deadLettered.invalid = invalid.length;
    logger.warn({ topic, partition, count: invalid.length, firstError: invalid[0].record.error }, 'invalid messages dead-lettered');
  }

  // 3. Lanes. A heartbeat timer keeps the group membership alive through slow handlers and
  // backoffs, and publishes progress so a crash mid-batch does not redo finished work.
  let heartbeatError: unknown;
  const timer = setInterval(() => {
    resolveProgress();
    control.heartbeat().catch((err: unknown) => {
      heartbeatError ??= err;
      result.aborted = 'heartbeat';
    });
  }, options.heartbeatIntervalMs);

  // kafkajs's isStale() builds a JSON key per call (~0.5 µs, measured as the runner's biggest
  // per-message cost). A batch turns stale only when other code runs (a rebalance, a seek),
  // so checking after every await and every STALE_CHECK_EVERY synchronous messages is enough.
  let sinceStaleCheck = 0;
  const shouldContinue = (afterAwait = false): boolean => {
    if (result.aborted) return false;
    if (afterAwait || ++sinceStaleCheck >= STALE_CHECK_EVERY) {
      sinceStaleCheck = 0;
      if (control.isStale()) result.aborted = 'stale';
    }
    return !result.aborted;
  };

  const done = (i: number): true => {
    result.processed++;
    tracker.complete(i);
    return true;
  };

  /**
   * Runs one message to a final outcome: true when done, false when it stopped unfinished
   * (batch aborted). Synchronous while the handler is: a handler that returns without a
   * promise costs no microtask, which is what keeps the runner near plain kafkajs speed.
   */
  const processOne = (i: number): boolean | Promise<boolean> => {
    const message = new Message<T>(topic, partition, messages[i], values[i] as T, 1);
    let returned: ReturnType<MessageHandler<T>>;
    try {
      returned = handler.handle(message);
    } catch (err) {
      return failed(i, message, outcomeOfError(err));
    }
    if (isPromise(returned)) {
      return returned.then(
        (r) => (outcomeOf(r).kind === 'ok' ? done(i) : failed(i, message, outcomeOf(r))),
        (err: unknown) => failed(i, message, outcomeOfError(err)),
      );
    }
    const outcome = outcomeOf(returned);
    return outcome.kind === 'ok' ? done(i) : failed(i, message, outcome);
  };

  /** The slow path: retry with backoff, or dead-letter. */
  const failed = async (i: number, first: Message<T>, firstOutcome: HandlerOutcome): Promise<boolean> => {
    const raw = messages[i];
    let message = first;
    let outcome = firstOutcome;
    for (;;) {
      if (outcome.kind === 'ok') return done(i);
      result.failedAttempts++;
      let reason: DeadLetterReason = 'rejected';
      if (outcome.kind === 'retry') {
        if (message.attempt < options.backoff.maxAttempts) {
          const delay = backoffDelay(message.attempt, options.backoff, options.random);
          logger.debug({ topic, partition, offset: raw.offset, attempt: message.attempt, delay, err: outcome.error.message }, 'handler failed, retrying');
          if (result.aborted) return false;
          await sleep(delay);
          if (result.aborted) return false;
          message = message.withAttempt(message.attempt + 1);
          try {
            outcome = outcomeOf(await handler.handle(message));
          } catch (err) {
            outcome = outcomeOfError(err);
          }
          continue;
        }
        reason = 'retries-exhausted';
      }
      await options.sink.send(options.deadLetterTopic, [record(raw, reason, errorText(outcome.error), message.attempt)]);
      result.deadLettered[reason]++;
      logger.warn({ topic, partition, offset: raw.offset, key: keyOf(i), reason, attempts: message.attempt, err: outcome.error.message }, 'message dead-lettered');
      tracker.complete(i);
      return true;
    }
  };

  // 4. Dispatch in offset order: per-key order and the concurrency bound are the scheduler's.
  const scheduler = new KeyScheduler<number>(options.concurrency, processOne, keyOf, () => shouldContinue(true));
  try {
    let waited = false;
    for (let i = 0; i < n; i++) {
      if (values[i] === INVALID) continue;
      // Lost the group or the partition: leave the rest to whoever owns it now.
      if (scheduler.failed || !shouldContinue(waited)) break;
      const wait = scheduler.submit(i);
      waited = wait !== undefined;
      if (waited) await wait;
    }
    await scheduler.drain();
  } finally {
    clearInterval(timer);
    // A stale batch belongs to a partition that moved or was seeked: its offsets are not ours to resolve.
    if (result.aborted !== 'stale') resolveProgress();
    result.completed = tracker.contiguous;
  }
  if (heartbeatError !== undefined) throw heartbeatError;
  return result;
}

/** Synchronous messages between two isStale() checks. */
const STALE_CHECK_EVERY = 64;

const EMPTY_HEADERS: IHeaders = Object.freeze({}) as IHeaders;

function isPromise<V>(value: unknown): value is Promise<V> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/**
 * A class rather than an object literal: one hidden class for every message (V8 keeps the
 * handler's property reads monomorphic), and the schema version is parsed only if read.
 */
class Message<T> implements ConsumedMessage<T> {
  readonly offset: string;
  readonly headers: IHeaders;
  readonly timestamp: string;
  private decodedKey: string | null | undefined = undefined;
  private version: number | undefined | null = null;

  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly raw: RawMessage,
    readonly value: T,
    readonly attempt: number,
  ) {
    this.offset = raw.offset;
    this.headers = raw.headers ?? EMPTY_HEADERS;
    this.timestamp = raw.timestamp;
  }

  get key(): string | null {
    if (this.decodedKey === undefined) this.decodedKey = this.raw.key === null ? null : this.raw.key.toString('utf8');
    return this.decodedKey;
  }

  get schemaVersion(): number | undefined {
    if (this.version === null) this.version = schemaVersionOf(this.raw.headers);
    return this.version;
  }

  withAttempt(attempt: number): Message<T> {
    return new Message(this.topic, this.partition, this.raw, this.value, attempt);
  }
}

/** `Name: message`; the stack stays in the logs, a header only needs to say what went wrong. */
function errorText(error: Error): string {
  return `${error.name}: ${error.message}`;
}

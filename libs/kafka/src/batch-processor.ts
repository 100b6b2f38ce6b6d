import type { IHeaders } from 'kafkajs';
import type { ZodType } from 'zod';
import { backoffDelay, sleep as realSleep, type BackoffOptions } from './backoff';
import { runBounded } from './bounded';
import { decodeValue, schemaVersionOf } from './codec';
import type { DeadLetterRecord, DeadLetterSink } from './dead-letter';
import type { DeadLetterReason } from './headers';
import { groupByKey } from './key-groups';
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
  /** Key lanes processed at once within one partition's batch. */
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
 * invalid ones, run the rest through the handler in per-key lanes (in order within a key,
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

  // 1. Decode and validate. Keys are decoded once here; lanes are built from them.
  const keys = new Array<string | null>(n);
  const values = new Array<T | typeof INVALID>(n);
  const invalid: Array<{ index: number; record: DeadLetterRecord }> = [];
  for (let i = 0; i < n; i++) {
    const raw = messages[i];
    keys[i] = raw.key === null ? null : raw.key.toString('utf8');
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

  const shouldContinue = (): boolean => {
    if (result.aborted) return false;
    if (control.isStale()) result.aborted = 'stale';
    return !result.aborted;
  };

  /** Runs one message to a final outcome; false when it stopped unfinished (batch aborted). */
  const processOne = async (i: number): Promise<boolean> => {
    const raw = messages[i];
    let message: ConsumedMessage<T> = {
      topic,
      partition,
      offset: raw.offset,
      key: keys[i],
      value: values[i] as T,
      headers: raw.headers ?? {},
      schemaVersion: schemaVersionOf(raw.headers),
      timestamp: raw.timestamp,
      attempt: 1,
    };
    for (;;) {
      let outcome: HandlerOutcome;
      try {
        outcome = outcomeOf(await handler.handle(message));
      } catch (err) {
        outcome = outcomeOfError(err);
      }
      if (outcome.kind === 'ok') {
        result.processed++;
        tracker.complete(i);
        return true;
      }
      result.failedAttempts++;
      let reason: DeadLetterReason = 'rejected';
      if (outcome.kind === 'retry') {
        if (message.attempt < options.backoff.maxAttempts) {
          const delay = backoffDelay(message.attempt, options.backoff, options.random);
          logger.debug({ topic, partition, offset: raw.offset, attempt: message.attempt, delay, err: outcome.error.message }, 'handler failed, retrying');
          if (result.aborted) return false;
          await sleep(delay);
          if (result.aborted) return false;
          message = { ...message, attempt: message.attempt + 1 };
          continue;
        }
        reason = 'retries-exhausted';
      }
      await options.sink.send(options.deadLetterTopic, [record(raw, reason, errorText(outcome.error), message.attempt)]);
      result.deadLettered[reason]++;
      logger.warn({ topic, partition, offset: raw.offset, key: keys[i], reason, attempts: message.attempt, err: outcome.error.message }, 'message dead-lettered');
      tracker.complete(i);
      return true;
    }
  };

  const lanes = groupByKey(keys);
  try {
    await runBounded(
      lanes,
      options.concurrency,
      async (lane) => {
        for (const i of lane) {
          if (values[i] === INVALID) continue;
          // Lost the group or the partition: leave the rest to whoever owns it now.
          if (!shouldContinue()) return;
          // A later message of the key must not overtake one that stopped unfinished.
          if (!(await processOne(i))) return;
        }
      },
      shouldContinue,
    );
  } finally {
    clearInterval(timer);
    // A stale batch belongs to a partition that moved or was seeked: its offsets are not ours to resolve.
    if (result.aborted !== 'stale') resolveProgress();
    result.completed = tracker.contiguous;
  }
  if (heartbeatError !== undefined) throw heartbeatError;
  return result;
}

/** `Name: message`; the stack stays in the logs, a header only needs to say what went wrong. */
function errorText(error: Error): string {
  return `${error.name}: ${error.message}`;
}

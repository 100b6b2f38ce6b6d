import type { TopicOutput } from '@meld/contracts';
import type { IHeaders, Kafka, Message, Producer as KafkaProducer } from 'kafkajs';
import type { Registry } from 'prom-client';
import type { ZodType } from 'zod';
import { createKafkaClient, type KafkaConnectionOptions } from './client';
import { encodeValue } from './codec';
import { GroupCommit } from './group-commit';
import { SCHEMA_VERSION_HEADER } from './headers';
import { silentLogger, type Logger } from './logger';
import { kafkaMetrics, type KafkaMetrics } from './metrics';
import { keyPartitioner } from './partitioner';
import { traceHeaders } from './trace-context';
import { UnpublishableMessageError } from './unpublishable';

export interface OutgoingMessage {
  /** Partition key: Meld keys every topic so one contact's messages stay in order. */
  key: string | null;
  /** Encoded as JSON. */
  value: unknown;
  headers?: IHeaders;
  /** Forces a partition; leave unset so the key decides. */
  partition?: number;
}

export interface SendOptions {
  /** Written into the `schema-version` header; contracts own the numbers. Default 1. */
  schemaVersion?: number;
  /** Validates every value before anything is sent, so a bad value fails the call, not a consumer. */
  schema?: ZodType<unknown>;
}

export interface ProducerOptions extends KafkaConnectionOptions {
  /** prom-client registry for the metrics; defaults to prom-client's global one. */
  metrics?: Registry;
  /**
   * An idle producer waits this long before its next request, so that sends arriving meanwhile
   * share it (Kafka's `linger.ms`). A busy one never waits: what queues behind a request in
   * flight goes out when it returns. Default 0.
   */
  lingerMs?: number;
  /** Messages per produce request; send() splits larger arrays. */
  maxBatchSize?: number;
  /**
   * Bytes (keys, values, headers) per produce request, default DEFAULT_MAX_BATCH_BYTES: Kafka
   * refuses a partition's record batch above its `message.max.bytes`, and kafkajs makes one
   * batch of a request's messages for each partition (ADR 0346). A single larger message goes
   * alone, and the broker decides.
   */
  maxBatchBytes?: number;
  /**
   * kafkajs's idempotent producer (exactly-once writes per partition). Off by default: it is
   * marked experimental in kafkajs 2.2, and the development broker cannot serve its
   * InitProducerId (kafkajs looks up the controller, which the librdkafka mock does not
   * report). Consumers are idempotent anyway, so a duplicate after a retry is harmless.
   */
  idempotent?: boolean;
  /**
   * Requests in flight per broker. 1 (the default) means a retried request can never be
   * overtaken by a later one, so per-key order holds without idempotence.
   */
  maxInFlightRequests?: number;
  /** Let a produce create a topic that does not exist. Off: a typo'd topic must fail, not appear. */
  allowAutoTopicCreation?: boolean;
  /** An existing kafkajs client to share sockets with; otherwise one is created. */
  kafka?: Kafka;
}

export interface Producer {
  connect(): Promise<void>;
  /**
   * Sends the messages in order, in produce requests of maxBatchSize, and resolves once the
   * brokers acknowledged all of them with acks -1 (every in-sync replica has them). A
   * rejection means some may have been written and some not: callers retry the whole call,
   * consumers deduplicate.
   */
  send(topic: string, messages: readonly OutgoingMessage[], options?: SendOptions): Promise<void>;
  /**
   * send() through a typed output of libs/contracts: its topic, validated against its schema,
   * each value keyed by its key (ADR 0218).
   */
  publish<T>(output: TopicOutput<T>, values: readonly T[], options?: Pick<SendOptions, 'schemaVersion'>): Promise<void>;
  /** Sends already-encoded kafkajs messages (the dead-letter path, which must keep the original bytes). */
  sendRaw(topic: string, messages: Message[]): Promise<void>;
  /** Waits for sends in progress, then closes the connections. */
  disconnect(): Promise<void>;
}

/**
 * 900 KiB: under Kafka's default `message.max.bytes` (1,048,588 bytes for a record batch) with
 * room for the batch's and the records' own fields, which messageBytes() only estimates.
 */
export const DEFAULT_MAX_BATCH_BYTES = 900 * 1024;

export function createProducer(options: ProducerOptions): Producer {
  return new MeldProducer(options);
}

class MeldProducer implements Producer {
  private readonly logger: Logger;
  private readonly metrics: KafkaMetrics;
  private readonly producer: KafkaProducer;
  private readonly groups: GroupCommit;
  private readonly inFlight = new Set<Promise<unknown>>();
  private connected: Promise<void> | undefined;
  private closing = false;

  constructor(options: ProducerOptions) {
    this.logger = options.logger ?? silentLogger;
    this.metrics = kafkaMetrics(options.metrics);
    const kafka = options.kafka ?? createKafkaClient(options);
    const idempotent = options.idempotent ?? false;
    const maxInFlight = idempotent ? 1 : (options.maxInFlightRequests ?? 1);
    this.producer = kafka.producer({
      idempotent,
      maxInFlightRequests: maxInFlight,
      allowAutoTopicCreation: options.allowAutoTopicCreation ?? false,
      // kafkajs's default partitioning, with a hash that does not allocate Long objects.
      createPartitioner: keyPartitioner,
      // kafkajs's default retries (5, from 300 ms) cover a leader election; beyond that the
      // caller sees the error rather than a request hanging for minutes.
      retry: idempotent ? undefined : { retries: 5, initialRetryTime: 300 },
    });
    this.groups = new GroupCommit(this.producer, () => this.connect(), {
      maxInFlight,
      maxBatchSize: options.maxBatchSize ?? 1000,
      maxBatchBytes: options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES,
      lingerMs: options.lingerMs ?? 0,
    });
  }

  connect(): Promise<void> {
    this.connected ??= this.producer.connect().catch((err: unknown) => {
      this.connected = undefined;
      throw err;
    });
    return this.connected;
  }

  send(topic: string, messages: readonly OutgoingMessage[], sendOptions: SendOptions = {}): Promise<void> {
    return this.track(async () => {
      if (messages.length === 0) return;
      await this.produce(topic, encodeMessages(topic, messages, sendOptions));
    });
  }

  publish<T>(output: TopicOutput<T>, values: readonly T[], options: Pick<SendOptions, 'schemaVersion'> = {}): Promise<void> {
    return this.send(
      output.topic,
      values.map((value) => ({ key: output.key(value), value })),
      { ...options, schema: output.schema },
    );
  }

  sendRaw(topic: string, messages: Message[]): Promise<void> {
    return this.track(() => this.produce(topic, messages));
  }

  async disconnect(): Promise<void> {
    this.closing = true;
    await Promise.allSettled([...this.inFlight]);
    if (this.connected) {
      await this.producer.disconnect();
      this.logger.info({}, 'kafka producer disconnected');
    }
    this.connected = undefined;
  }

  /** Runs a send, refused once disconnecting; disconnect() waits for the sends in flight. */
  private async track<R>(work: () => Promise<R>): Promise<R> {
    if (this.closing) throw new Error('producer is disconnecting');
    const p = work();
    this.inFlight.add(p);
    try {
      return await p;
    } finally {
      this.inFlight.delete(p);
    }
  }

  private async produce(topic: string, messages: Message[]): Promise<void> {
    const end = this.metrics.produceDuration.startTimer({ topic });
    await this.groups.send(topic, messages);
    end();
    this.metrics.produced.inc({ topic }, messages.length);
  }
}

/**
 * Validates (when a schema is given) and encodes a send's messages; throws naming the first bad
 * one, an UnpublishableMessageError (an outbox relay sets its row aside, ADR 0346).
 */
function encodeMessages(topic: string, messages: readonly OutgoingMessage[], options: SendOptions): Message[] {
  const version = String(options.schemaVersion ?? 1);
  // The caller's trace and request id, read once per call: every message of it has the same cause.
  const traced = traceHeaders();
  const encoded = new Array<Message>(messages.length);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (options.schema) {
      const parsed = options.schema.safeParse(m.value);
      if (!parsed.success) throw new UnpublishableMessageError('schema', `message ${i} for ${topic} does not match its schema: ${parsed.error.message}`);
    }
    encoded[i] = {
      key: m.key,
      value: encodeOrRefuse(topic, i, m.value),
      partition: m.partition,
      // A literal key (not a computed one) keeps the header object on V8's fast path.
      headers: m.headers || traced ? { ...traced, ...m.headers, [SCHEMA_VERSION_HEADER]: version } : { 'schema-version': version },
    };
  }
  return encoded;
}

function encodeOrRefuse(topic: string, i: number, value: unknown): string {
  try {
    return encodeValue(value);
  } catch (err) {
    throw new UnpublishableMessageError('not_json', `message ${i} for ${topic}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

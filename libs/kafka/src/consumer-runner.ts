import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Registry } from 'prom-client';
import { DEFAULT_BACKOFF, type BackoffOptions } from './backoff';
import { processBatch, type ProcessOptions, type TopicHandler } from './batch-processor';
import { createKafkaClient, type KafkaConnectionOptions } from './client';
import { deadLetterMessage, defaultDeadLetterTopic, type DeadLetterSink } from './dead-letter';
import { silentLogger } from './logger';
import { kafkaMetrics } from './metrics';
import { createProducer, type Producer } from './producer';
import { Ticker } from './ticker';

export interface ConsumerRunnerOptions extends KafkaConnectionOptions {
  groupId: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- one runner serves topics of different message types
  handlers: ReadonlyArray<TopicHandler<any>>;
  /** prom-client registry for the metrics; defaults to prom-client's global one. */
  metrics?: Registry;
  /** Keys with asynchronous handler work in flight at once, per partition batch. Default 16. */
  concurrency?: number;
  /**
   * Partition batches processed at once (kafkajs partitionsConsumedConcurrently). Default 2:
   * one partition's batch is processed while another's offset commit is in flight, which
   * measured ~20% more throughput on the development broker; per-key order is unaffected (a
   * key lives in one partition). Measured there too: 3 or more collapses kafkajs (plain
   * kafkajs as well) to ~50k msg/s.
   */
  partitionsConsumedConcurrently?: number;
  backoff?: Partial<BackoffOptions>;
  /**
   * Where a new group starts. Default true: a consumer group that is new (a new app, a
   * renamed group) reads what is already there instead of silently skipping it.
   */
  fromBeginning?: boolean;
  sessionTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /** Dead-letter topic of a topic; default `<topic>.dlq`. */
  deadLetterTopic?: (topic: string) => string;
  /** Producer for dead letters; by default the runner creates (and closes) its own. */
  producer?: Producer;
  /** An existing kafkajs client to share; otherwise one is created. */
  kafka?: Kafka;
  /**
   * Signals that stop the runner gracefully (finish the batch in progress, commit, leave
   * the group). Default none: NestJS apps stop it from their shutdown hook; standalone
   * workers pass ['SIGTERM', 'SIGINT'] (or call stopOnSignals()).
   */
  stopOnSignals?: NodeJS.Signals[];
  /** kafkajs fetch sizing, for the bench and unusual topics. */
  maxBytesPerPartition?: number;
  /**
   * How long a fetch may wait for data. Default 100 ms, not kafkajs's 5 s: the development
   * broker (librdkafka's mock) holds every fetch for the full wait even when messages arrive
   * meanwhile (measured: 5 s → ~4.3 s per hop, 100 ms → ~10 ms), and stop() waits for the
   * fetch in flight. On real Kafka the cost is one empty fetch per 100 ms per broker when idle.
   */
  maxWaitTimeInMs?: number;
}

export interface ConsumerRunner {
  /** Connects, subscribes and starts consuming; resolves once the group is joined and partitions assigned. */
  start(): Promise<void>;
  /** Finishes the batch in progress, commits its offsets, leaves the group, disconnects. Idempotent. */
  stop(): Promise<void>;
  /** False once kafkajs crashed without restarting; readiness probes report it. */
  isHealthy(): boolean;
  /** The underlying kafkajs consumer, for instrumentation events. */
  readonly consumer: Consumer;
}

export function createConsumerRunner(options: ConsumerRunnerOptions): ConsumerRunner {
  const logger = options.logger ?? silentLogger;
  const group = options.groupId;
  const kafka = options.kafka ?? createKafkaClient(options);
  const metrics = kafkaMetrics(options.metrics);
  const ownsProducer = !options.producer;
  const producer = options.producer ?? createProducer({ ...options, kafka, metrics: options.metrics });
  const deadLetterTopicOf = options.deadLetterTopic ?? defaultDeadLetterTopic;
  const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
  const heartbeatInterval = options.heartbeatIntervalMs ?? 3_000;

  const handlers = new Map<string, TopicHandler<unknown>>();
  for (const h of options.handlers) {
    if (handlers.has(h.topic)) throw new Error(`two handlers for topic ${h.topic}`);
    handlers.set(h.topic, h as TopicHandler<unknown>);
  }
  if (handlers.size === 0) throw new Error('a consumer runner needs at least one topic handler');

  const consumer = kafka.consumer({
    groupId: group,
    sessionTimeout,
    heartbeatInterval,
    maxBytesPerPartition: options.maxBytesPerPartition,
    maxWaitTimeInMs: options.maxWaitTimeInMs ?? 100,
    // Never create a topic by subscribing to it: startup checks topics exist (ensureTopics).
    allowAutoTopicCreation: false,
  });

  const sink: DeadLetterSink = {
    send: (topic, records) => producer.sendRaw(topic, records.map((r) => deadLetterMessage(r, group))),
  };

  const ticker = new Ticker(heartbeatInterval);
  const processOptionsByTopic = new Map<string, ProcessOptions>();
  for (const [topic, h] of handlers) {
    processOptionsByTopic.set(topic, {
      group,
      concurrency: options.concurrency ?? 16,
      backoff: { ...DEFAULT_BACKOFF, ...options.backoff },
      // Progress and liveness are published at the heartbeat cadence kafkajs itself uses.
      heartbeatIntervalMs: heartbeatInterval,
      ticker,
      deadLetterTopic: h.deadLetterTopic ?? deadLetterTopicOf(topic),
      sink,
      logger,
    });
  }

  let healthy = true;
  let state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  let stopping: Promise<void> | undefined;
  const signalHandlers: Array<[NodeJS.Signals, () => void]> = [];

  consumer.on(consumer.events.CRASH, ({ payload }) => {
    logger.error({ err: payload.error.message, group, restart: payload.restart }, 'kafka consumer crashed');
    if (!payload.restart) healthy = false;
  });

  // Labelled children resolved once per topic: prom-client hashes the label object on every
  // labelled call, which per batch adds up at tens of thousands of messages per second.
  const series = new Map<string, ReturnType<typeof seriesFor>>();
  const seriesFor = (topic: string) => {
    const labels = { topic, group };
    return {
      processed: metrics.processed.labels(labels),
      failed: metrics.failed.labels(labels),
      batchDuration: metrics.batchDuration.labels(labels),
      deadLettered: (reason: string) => metrics.deadLettered.labels({ ...labels, reason }),
      lag: new Map<number, ReturnType<typeof metrics.lag.labels>>(),
    };
  };

  const eachBatch = async ({ batch, resolveOffset, heartbeat, isStale }: EachBatchPayload): Promise<void> => {
    const topic = batch.topic;
    const handler = handlers.get(topic);
    const processOptions = processOptionsByTopic.get(topic);
    if (!handler || !processOptions) throw new Error(`no handler for topic ${topic}`);
    let s = series.get(topic);
    if (!s) series.set(topic, (s = seriesFor(topic)));
    const started = process.hrtime.bigint();
    const result = await processBatch(batch, handler, { resolveOffset, heartbeat, isStale }, processOptions);
    s.batchDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
    if (result.processed) s.processed.inc(result.processed);
    if (result.failedAttempts) s.failed.inc(result.failedAttempts);
    const dead = result.deadLettered;
    if (dead.invalid || dead.rejected || dead['retries-exhausted']) {
      for (const [reason, count] of Object.entries(dead)) if (count) s.deadLettered(reason).inc(count);
    }
    // offsetLag() is arithmetic on the batch's high watermark: no request, so it is cheap enough per batch.
    let lag = s.lag.get(batch.partition);
    if (!lag) s.lag.set(batch.partition, (lag = metrics.lag.labels({ topic, group, partition: String(batch.partition) })));
    lag.set(Number(batch.offsetLag()));
  };

  const start = async (): Promise<void> => {
    if (state !== 'new') throw new Error(`consumer runner already ${state}`);
    state = 'starting';
    await producer.connect();
    await consumer.connect();
    await consumer.subscribe({ topics: [...handlers.keys()], fromBeginning: options.fromBeginning ?? true });
    // run() resolves once kafkajs has joined the group and synced its assignment.
    await consumer.run({
      // Offsets are resolved by processBatch as messages finish, never ahead of them.
      eachBatchAutoResolve: false,
      // kafkajs commits the resolved offsets after every batch (and when a batch throws).
      autoCommit: true,
      partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 2,
      eachBatch,
    });
    state = 'running';
    for (const signal of options.stopOnSignals ?? []) {
      const onSignal = (): void => {
        logger.info({ signal, group }, 'stopping kafka consumer');
        void stop().catch((err: unknown) => logger.error({ err: (err as Error).message, group }, 'kafka consumer stop failed'));
      };
      process.once(signal, onSignal);
      signalHandlers.push([signal, onSignal]);
    }
    logger.info({ group, topics: [...handlers.keys()] }, 'kafka consumer started');
  };

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (state === 'new') {
        state = 'stopped';
        return;
      }
      state = 'stopping';
      for (const [signal, fn] of signalHandlers) process.removeListener(signal, fn);
      // disconnect() = stop (kafkajs waits for the batch in progress; it resolves its
      // offsets as it finishes and kafkajs commits them) + leave the group + close sockets.
      await consumer.disconnect();
      ticker.close();
      if (ownsProducer) await producer.disconnect();
      state = 'stopped';
      logger.info({ group }, 'kafka consumer stopped');
    })();
    return stopping;
  };

  return { start, stop, isHealthy: () => healthy && state !== 'stopped', consumer };
}

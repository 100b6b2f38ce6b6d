import { errorSummary } from '@meld/contracts';
import type { Consumer, ConsumerRunConfig, Kafka } from 'kafkajs';
import { inspectCluster } from './broker-kind';
import { createKafkaClient } from './client';
import type { ConsumerRunnerOptions } from './consumer-runner';
import { deadLetterMessage, type DeadLetterSink } from './dead-letter';
import { silentLogger, type Logger } from './logger';
import { kafkaMetrics, type KafkaMetrics } from './metrics';
import { createProducer, type Producer } from './producer';

/** What both runner shapes (per-message handlers, batch sinks) share: one consumer's life. */
export type RunnerCoreOptions = Omit<ConsumerRunnerOptions, 'handlers' | 'concurrency' | 'partitionsConsumedConcurrently' | 'backoff' | 'deadLetterTopic'>;

export interface RunnerCore {
  readonly kafka: Kafka;
  /** The kafkajs consumer; created by start(), once the fetch wait is known. */
  readonly consumer: Consumer;
  readonly logger: Logger;
  readonly group: string;
  readonly metrics: KafkaMetrics;
  readonly heartbeatIntervalMs: number;
  /** Writes dead letters through the runner's producer (acks -1). */
  readonly deadLetters: DeadLetterSink;
  /**
   * Checks that `topics` and `deadLetterTopics` exist (not on the development broker), then
   * connects, subscribes to `topics` and runs; resolves once the group is joined and partitions
   * assigned. `listen` gets the consumer before it connects (group events).
   */
  start(topics: string[], deadLetterTopics: string[], run: ConsumerRunConfig, listen?: (consumer: Consumer) => void): Promise<void>;
  /**
   * Stops once: `beforeLeave` runs while the consumer is still in the group (a sink stores and
   * commits what it holds), then kafkajs finishes the batch in progress, leaves the group and
   * disconnects. `afterStop` runs once the consumer is gone (timers, the runner's producer).
   */
  stop(hooks?: { beforeLeave?: () => Promise<void>; afterStop?: () => void }): Promise<void>;
  isHealthy(): boolean;
  /** 'running' between a successful start and stop. */
  readonly state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped';
}

export function createRunnerCore(options: RunnerCoreOptions): RunnerCore {
  const logger = options.logger ?? silentLogger;
  const group = options.groupId;
  const kafka = options.kafka ?? createKafkaClient(options);
  const metrics = kafkaMetrics(options.metrics);
  const ownsProducer = !options.producer;
  const producer: Producer = options.producer ?? createProducer({ ...options, kafka, metrics: options.metrics });
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 3_000;

  let consumer: Consumer | undefined;
  const createConsumer = (maxWaitTimeInMs: number): Consumer => {
    const c = kafka.consumer({
      groupId: group,
      sessionTimeout: options.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: heartbeatIntervalMs,
      maxBytesPerPartition: options.maxBytesPerPartition,
      maxWaitTimeInMs,
      // Never create a topic by subscribing to it: startup checks topics exist (ensureTopics).
      allowAutoTopicCreation: false,
    });
    c.on(c.events.CRASH, ({ payload }) => {
      // The crash is whatever a handler threw (kafkajs wraps it once retries run out), a store's
      // error quoting a row among them: class and code only (ADR 0338).
      const { cause } = payload.error as Error;
      logger.error({ err: errorSummary(payload.error), ...(cause === undefined ? {} : { cause: errorSummary(cause) }), group, restart: payload.restart }, 'kafka consumer crashed');
      if (!payload.restart) healthy = false;
    });
    return c;
  };

  let healthy = true;
  let state: RunnerCore['state'] = 'new';
  let stopping: Promise<void> | undefined;
  const signalHandlers: Array<[NodeJS.Signals, () => void]> = [];

  const core: RunnerCore = {
    kafka,
    get consumer() {
      if (!consumer) throw new Error('the kafka consumer is created by start()');
      return consumer;
    },
    logger,
    group,
    metrics,
    heartbeatIntervalMs,
    deadLetters: { send: (topic, records) => producer.sendRaw(topic, records.map((r) => deadLetterMessage(r, group))) },
    get state() {
      return state;
    },
    isHealthy: () => healthy && state !== 'stopped',
    async start(topics, deadLetterTopics, run, listen) {
      if (state !== 'new') throw new Error(`consumer runner already ${state}`);
      state = 'starting';
      const cluster = await inspectCluster(kafka, [...topics, ...deadLetterTopics]);
      if (cluster.missing.length > 0) throw new Error(`Kafka topics missing: ${cluster.missing.join(', ')} (create them with \`meld topics\`)`);
      await producer.connect();
      const c = (consumer = createConsumer(options.maxWaitTimeInMs ?? cluster.fetchWaitMs));
      listen?.(c);
      await c.connect();
      await c.subscribe({ topics, fromBeginning: options.fromBeginning ?? true });
      // run() resolves once kafkajs has joined the group and synced its assignment.
      await c.run(run);
      state = 'running';
      for (const signal of options.stopOnSignals ?? []) {
        const onSignal = (): void => {
          logger.info({ signal, group }, 'stopping kafka consumer');
          void core.stop().catch((err: unknown) => logger.error({ err: errorSummary(err), group }, 'kafka consumer stop failed'));
        };
        process.once(signal, onSignal);
        signalHandlers.push([signal, onSignal]);
      }
      logger.info({ group, topics }, 'kafka consumer started');
    },
    stop(hooks = {}) {
      stopping ??= (async () => {
        if (state === 'new') {
          state = 'stopped';
          return;
        }
        const wasRunning = state === 'running';
        state = 'stopping';
        for (const [signal, fn] of signalHandlers) process.removeListener(signal, fn);
        if (wasRunning && hooks.beforeLeave) await hooks.beforeLeave();
        // disconnect() = stop (kafkajs waits for the batch in progress) + leave the group + close sockets.
        await consumer?.disconnect();
        hooks.afterStop?.();
        if (ownsProducer) await producer.disconnect();
        state = 'stopped';
        logger.info({ group }, 'kafka consumer stopped');
      })();
      return stopping;
    },
  };
  return core;
}

import { createConsumerRunner, type ConsumerRunner, type ConsumerRunnerOptions, type TopicHandler } from '@meld/kafka';
import { type KafkaClient, metricsRegistry } from '@meld/platform';
import type { Logger } from '@nestjs/common';

const START_RETRY_MS = 2000;

/** Settings every identity-merge consumer group shares. */
export interface GroupOptions {
  groupId: string;
  /** Where a new group starts (true: a new deployment processes what is already there). */
  fromBeginning: boolean;
  /**
   * How long the group waits for a member that stopped heartbeating (a killed process)
   * before giving its partitions to others. Default 30 s (kafkajs); the crash tests use 6 s.
   */
  sessionTimeoutMs?: number;
}

/** `MELD_KAFKA_SESSION_TIMEOUT_MS` when set (a positive integer), else the library default. */
export function sessionTimeoutFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const n = Number(env.MELD_KAFKA_SESSION_TIMEOUT_MS);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export interface BackgroundConsumerOptions extends GroupOptions {
  client: KafkaClient;
  clientId: string;
  logger: Logger;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- one runner per topic handler of any message type
  handler: TopicHandler<any>;
  concurrency?: number;
  partitionsConsumedConcurrently?: number;
  backoff?: ConsumerRunnerOptions['backoff'];
  producer?: ConsumerRunnerOptions['producer'];
}

/**
 * A libs/kafka consumer runner started in the background: Kafka may not answer when the app
 * boots, so a failed start is retried with a fresh runner (a runner starts once) until it
 * joins its group or the app stops; readiness reports meanwhile.
 */
export class BackgroundConsumer {
  private runner?: ConsumerRunner;
  private stopped = false;
  private starting?: Promise<void>;

  constructor(private readonly options: BackgroundConsumerOptions) {}

  private createRunner(): ConsumerRunner {
    const { client, logger: log, sessionTimeoutMs } = this.options;
    return createConsumerRunner({
      kafka: client.kafka,
      brokers: client.brokers,
      clientId: this.options.clientId,
      groupId: this.options.groupId,
      fromBeginning: this.options.fromBeginning,
      metrics: metricsRegistry,
      concurrency: this.options.concurrency,
      partitionsConsumedConcurrently: this.options.partitionsConsumedConcurrently,
      backoff: this.options.backoff,
      producer: this.options.producer,
      sessionTimeoutMs,
      // Heartbeats well within the session, or a short session times out healthy members.
      heartbeatIntervalMs: sessionTimeoutMs ? Math.min(3000, Math.floor(sessionTimeoutMs / 3)) : undefined,
      logger: {
        debug: () => undefined,
        info: (o, m) => log.log(`${m ?? ''} ${JSON.stringify(o)}`),
        warn: (o, m) => log.warn(`${m ?? ''} ${JSON.stringify(o)}`),
        error: (o, m) => log.error(`${m ?? ''} ${JSON.stringify(o)}`),
      },
      handlers: [this.options.handler],
    });
  }

  start(): void {
    this.starting ??= (async () => {
      while (!this.stopped) {
        const runner = this.createRunner();
        this.runner = runner;
        try {
          await runner.start();
          return;
        } catch (err) {
          await runner.stop().catch(() => undefined);
          this.options.logger.warn(`${this.options.groupId} consumer could not start, retrying: ${err instanceof Error ? err.message : String(err)}`);
          await new Promise((r) => setTimeout(r, START_RETRY_MS));
        }
      }
    })();
  }

  /** Resolves once the group is joined (or the consumer was stopped before). */
  started(): Promise<void> {
    return this.starting ?? Promise.resolve();
  }

  /** False until started, and once the consumer crashed for good. */
  isHealthy(): boolean {
    return this.runner?.isHealthy() ?? false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.starting;
    await this.runner?.stop();
  }
}

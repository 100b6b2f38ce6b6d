import { type ClickHouse } from '@meld/clickhouse';
import { DATA_SOURCE } from '@meld/db';
import { createConsumerRunner, type ConsumerRunner, type ConsumerRunnerOptions, type TopicHandler } from '@meld/kafka';
import { CLICKHOUSE, KAFKA, type KafkaClient, metricsRegistry } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AudienceSink, audienceConcurrency } from './audience.sink';
import { createEventsSinkRunner } from './events.sink';
import { SINK_OPTIONS, type SinkOptions } from './sink-options';

const START_RETRY_MS = 2000;

/**
 * The ClickHouse sinks of the data path, each a consumer group on the libs/kafka runner:
 * - `meld.events.v1` → `events` through the libs/kafka sink runner (events.sink.ts): one
 *   insert per batch of messages taken while the last insert ran, offsets committed after it;
 *   a redelivered event is absorbed by the table's key;
 * - `meld.audience.v1` → `audience_membership` and `audience_contacts` (audience.sink.ts): a
 *   snapshot upserts one row per listed source contact and removes those identity-merge says
 *   left; a tombstone removes its members. `merge` messages need nothing: the survivor's
 *   snapshot lists them and identity-merge tombstones each absorbed id. A snapshot is also a
 *   live row typed by the project's catalogue (audience-contact-row.ts), a tombstone a deleted row.
 * Store errors throw and are retried (maxAttempts is high), never dead-lettered quickly.
 */
@Injectable()
export class SinksConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ClickHouseSinks');
  private readonly runners: ConsumerRunner[] = [];
  private readonly audience: AudienceSink;
  private stopped = false;
  private starting: Promise<void>[] = [];

  constructor(
    @Inject(KAFKA) private readonly client: KafkaClient,
    @Inject(CLICKHOUSE) private readonly ch: ClickHouse,
    @Inject(DATA_SOURCE) db: DataSource,
    @Inject(SINK_OPTIONS) private readonly options: SinkOptions,
  ) {
    this.audience = new AudienceSink(ch, db, options);
  }

  /** False once a consumer crashed for good. */
  isHealthy(): boolean {
    return this.runners.length === 2 && this.runners.every((r) => r.isHealthy());
  }

  private createRunner(groupId: string, handler: TopicHandler<unknown>, concurrency: number): ConsumerRunner {
    return createConsumerRunner({ ...this.runnerOptions(groupId), concurrency, handlers: [handler] });
  }

  /** What every probes consumer shares. */
  private runnerOptions(groupId: string): Omit<ConsumerRunnerOptions, 'handlers'> {
    const log = this.logger;
    return {
      kafka: this.client.kafka,
      brokers: this.client.brokers,
      clientId: 'meld-probes',
      groupId,
      fromBeginning: this.options.fromBeginning,
      metrics: metricsRegistry,
      backoff: { maxAttempts: this.options.maxAttempts, initialDelayMs: 200, maxDelayMs: 10_000 },
      logger: {
        debug: () => undefined,
        info: (o, m) => log.log(`${m ?? ''} ${JSON.stringify(o)}`),
        warn: (o, m) => log.warn(`${m ?? ''} ${JSON.stringify(o)}`),
        error: (o, m) => log.error(`${m ?? ''} ${JSON.stringify(o)}`),
      },
    };
  }

  private startLoop(make: () => ConsumerRunner, name: string): Promise<void> {
    return (async () => {
      while (!this.stopped) {
        const runner = make();
        try {
          await runner.start();
          this.runners.push(runner);
          return;
        } catch (err) {
          await runner.stop().catch(() => undefined);
          this.logger.warn(`${name} consumer could not start, retrying: ${err instanceof Error ? err.message : String(err)}`);
          await new Promise((r) => setTimeout(r, START_RETRY_MS));
        }
      }
    })();
  }

  onApplicationBootstrap(): void {
    // Kafka may not answer yet: keep trying in the background.
    this.starting = [
      this.startLoop(() => createEventsSinkRunner(this.runnerOptions(this.options.eventsGroupId), this.ch, this.options), 'events'),
      this.startLoop(() => this.createRunner(this.options.audienceGroupId, this.audience.handler(), audienceConcurrency(this.options)), 'audience'),
    ];
  }

  /** Resolves once both consumers joined their groups (tests). */
  async started(): Promise<void> {
    await Promise.all(this.starting);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.starting);
    await Promise.all(this.runners.map((r) => r.stop()));
    this.audience.flush();
  }
}

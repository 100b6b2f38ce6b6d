import { type ClickHouse } from '@meld/clickhouse';
import { Topics, audienceChange, eventAccepted, type AudienceChange, type EventAccepted } from '@meld/contracts';
import { DeadLetterError, createConsumerRunner, topicHandler, type ConsumedMessage, type ConsumerRunner, type TopicHandler } from '@meld/kafka';
import { CLICKHOUSE, KAFKA, type KafkaClient, metricsRegistry } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { type EventRow, toEventRow } from './event-row';
import { InsertBuffer } from './insert-buffer';
import { removalRows, snapshotRows } from './membership';
import { MembershipRepository } from './membership.repository';
import { SINK_OPTIONS, type SinkOptions } from './sink-options';

const START_RETRY_MS = 2000;

/**
 * The ClickHouse sinks of the data path, each a consumer group on the libs/kafka runner:
 * - `meld.events.v1` → `events`, many messages per insert (InsertBuffer), a message done
 *   only once its row is stored; a redelivered event is absorbed by the table's key;
 * - `meld.audience.v1` → `audience_membership`: a snapshot upserts one row per listed source
 *   contact and removes those that pointed at it but are no longer listed; a tombstone
 *   removes all its members. `merge` messages need nothing: the survivor's snapshot lists them.
 * Store errors throw and are retried (maxAttempts is high), never dead-lettered quickly.
 */
@Injectable()
export class SinksConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ClickHouseSinks');
  private readonly runners: ConsumerRunner[] = [];
  private readonly events: InsertBuffer<EventRow>;
  private readonly membership: MembershipRepository;
  private stopped = false;
  private starting: Promise<void>[] = [];

  constructor(
    @Inject(KAFKA) private readonly client: KafkaClient,
    @Inject(CLICKHOUSE) ch: ClickHouse,
    @Inject(SINK_OPTIONS) private readonly options: SinkOptions,
  ) {
    this.events = new InsertBuffer<EventRow>((rows) => ch.insert('events', rows), { maxRows: options.maxRows, lingerMs: options.lingerMs });
    this.membership = new MembershipRepository(ch);
  }

  handleEvent(message: ConsumedMessage<EventAccepted>): Promise<void> {
    return this.events.add(toEventRow(message.value));
  }

  async handleAudience(message: ConsumedMessage<AudienceChange>): Promise<void> {
    const m = message.value;
    if (m.kind === 'merge') return;
    const current = await this.membership.currentMembers(m.projectId, m.audienceId);
    if (m.kind === 'tombstone') {
      await this.membership.insert(removalRows(m.projectId, m.audienceId, m.at, current, new Set()));
      return;
    }
    const { rows, invalid } = snapshotRows(m);
    if (invalid.length) throw new DeadLetterError(`dsContactIds not of the form <dataSourceId>/<userId>: ${invalid.slice(0, 3).join(', ')}`);
    await this.membership.insert([...rows, ...removalRows(m.projectId, m.audienceId, m.at, current, new Set(m.dsContactIds))]);
  }

  /** False once a consumer crashed for good. */
  isHealthy(): boolean {
    return this.runners.length === 2 && this.runners.every((r) => r.isHealthy());
  }

  private createRunner(groupId: string, handler: TopicHandler<unknown>, concurrency: number): ConsumerRunner {
    const log = this.logger;
    return createConsumerRunner({
      kafka: this.client.kafka,
      brokers: this.client.brokers,
      clientId: 'meld-probes',
      groupId,
      fromBeginning: this.options.fromBeginning,
      metrics: metricsRegistry,
      concurrency,
      backoff: { maxAttempts: this.options.maxAttempts, initialDelayMs: 200, maxDelayMs: 10_000 },
      logger: {
        debug: () => undefined,
        info: (o, m) => log.log(`${m ?? ''} ${JSON.stringify(o)}`),
        warn: (o, m) => log.warn(`${m ?? ''} ${JSON.stringify(o)}`),
        error: (o, m) => log.error(`${m ?? ''} ${JSON.stringify(o)}`),
      },
      handlers: [handler],
    });
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
    const events = topicHandler({ topic: Topics.events, schema: eventAccepted, handle: (m) => this.handleEvent(m) }) as TopicHandler<unknown>;
    const audience = topicHandler({ topic: Topics.audience, schema: audienceChange, handle: (m) => this.handleAudience(m) }) as TopicHandler<unknown>;
    // Events: many keys in flight so one insert carries a whole batch; audience: the default.
    this.starting = [
      this.startLoop(() => this.createRunner(this.options.eventsGroupId, events, this.options.maxRows), 'events'),
      this.startLoop(() => this.createRunner(this.options.audienceGroupId, audience, 16), 'audience'),
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
    this.events.flush();
  }
}

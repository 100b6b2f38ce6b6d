import { type ClickHouse } from '@meld/clickhouse';
import { DATA_SOURCE } from '@meld/db';
import { BackgroundConsumer, CLICKHOUSE, KAFKA, type KafkaClient, hostedRunnerOptions } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AudienceSink, createAudienceSinkRunner } from './audience.sink';
import { createEventsSinkRunner } from './events.sink';
import { SINK_OPTIONS, type SinkOptions } from './sink-options';

/**
 * The ClickHouse sinks of the data path, each a consumer group on the libs/kafka sink runner
 * (one write per batch of messages taken while the last write ran, offsets committed after it;
 * ADRs 0065, 0339):
 * - `meld.events.v1` → `events` (events.sink.ts); a redelivered event is absorbed by the table's key;
 * - `meld.audience.v1` → `audience_membership`, `audience_contacts` and `audience_snapshot`
 *   (audience.sink.ts): a snapshot upserts one row per listed source contact and removes those
 *   identity-merge says left; a tombstone removes its members. `merge` messages need nothing: the
 *   survivor's snapshot lists them and identity-merge tombstones each absorbed id. A snapshot is
 *   also a live row typed by the project's catalogue (audience-contact-row.ts), a tombstone a
 *   deleted row.
 * Store errors throw and are retried (maxAttempts is high), never dead-lettered quickly.
 */
@Injectable()
export class SinksConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ClickHouseSinks');
  private readonly consumers: BackgroundConsumer[];

  constructor(
    @Inject(KAFKA) client: KafkaClient,
    @Inject(CLICKHOUSE) ch: ClickHouse,
    @Inject(DATA_SOURCE) db: DataSource,
    @Inject(SINK_OPTIONS) options: SinkOptions,
  ) {
    // One sink for the app's life: its catalogue cache outlives a restart of the consumer.
    const audience = new AudienceSink(ch, db);
    /** What every probes consumer shares. */
    const common = (groupId: string) => ({
      ...hostedRunnerOptions({ client, clientId: 'meld-probes', logger: this.logger, groupId, fromBeginning: options.fromBeginning, sessionTimeoutMs: options.sessionTimeoutMs }),
      backoff: { maxAttempts: options.maxAttempts, initialDelayMs: 200, maxDelayMs: 10_000 },
    });
    this.consumers = [
      new BackgroundConsumer({ name: 'events', logger: this.logger, create: () => createEventsSinkRunner(common(options.eventsGroupId), ch, options) }),
      new BackgroundConsumer({ name: 'audience', logger: this.logger, create: () => createAudienceSinkRunner(common(options.audienceGroupId), audience, options) }),
    ];
  }

  /** False until both consumers joined their groups, and once one crashed for good. */
  isHealthy(): boolean {
    return this.consumers.every((c) => c.isHealthy());
  }

  onApplicationBootstrap(): void {
    // Kafka may not answer yet: keep trying in the background.
    for (const c of this.consumers) c.start();
  }

  /** Resolves once both consumers joined their groups (tests). */
  async started(): Promise<void> {
    await Promise.all(this.consumers.map((c) => c.started()));
  }

  /** Each sink runner stores and commits what it took before it leaves its group (stopTimeoutMs). */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.consumers.map((c) => c.stop()));
  }
}

import { Topics, audienceChange } from '@meld/contracts';
import { DATA_SOURCE, OutboxPump } from '@meld/db';
import { createProducer, type Producer } from '@meld/kafka';
import { KAFKA, type KafkaClient, metricsRegistry } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { DataSource } from 'typeorm';

/**
 * Publishes `audience_outbox` to `meld.audience.v1` after the merge transactions commit.
 * A table of its own so the merge never depends on the ingest app running.
 */
@Injectable()
export class AudienceOutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly producer: Producer;
  private readonly pump: OutboxPump;

  constructor(@Inject(DATA_SOURCE) ds: DataSource, @Inject(KAFKA) client: KafkaClient) {
    this.producer = createProducer({ kafka: client.kafka, brokers: client.brokers, clientId: 'meld-identity-merge', metrics: metricsRegistry });
    this.pump = new OutboxPump(ds, {
      table: 'audience_outbox',
      topic: Topics.audience,
      publish: (topic, messages) => this.producer.send(topic, messages, { schema: audienceChange }),
      metrics: metricsRegistry,
    });
  }

  onApplicationBootstrap(): void {
    this.pump.start();
  }

  /** A merge step committed outbox rows: publish now rather than at the next poll. */
  nudge(): void {
    this.pump.nudge();
  }

  drainOnce(): Promise<number> {
    return this.pump.drainOnce();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.pump.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.producer.disconnect();
  }
}

import { DATA_SOURCE, OutboxPump } from '@meld/db';
import { createProducer, type Producer } from '@meld/kafka';
import { KAFKA, type KafkaClient, metricsRegistry } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { DataSource } from 'typeorm';

/**
 * Drains the shared `outbox` (contact changes and events of the `meld-messaging` data
 * source, as ingest's) so messaging does not depend on ingest running (ADR 0181). The pump's
 * advisory lock lets one pump of the table drain at a time, ingest's or this one, so rows of
 * one key still leave in order.
 */
@Injectable()
export class ContactsOutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly producer: Producer;
  private readonly pump: OutboxPump;

  constructor(@Inject(DATA_SOURCE) ds: DataSource, @Inject(KAFKA) client: KafkaClient) {
    this.producer = createProducer({ kafka: client.kafka, brokers: client.brokers, clientId: 'meld-messaging-contacts', metrics: metricsRegistry });
    this.pump = new OutboxPump(ds, { table: 'outbox', publish: (topic, messages) => this.producer.send(topic, messages), metrics: metricsRegistry });
  }

  onApplicationBootstrap(): void {
    this.pump.start();
  }

  nudge(): void {
    this.pump.nudge();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.pump.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.producer.disconnect();
  }
}

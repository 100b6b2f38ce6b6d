import { Topics, eventsMessage, smsStatusChange } from '@meld/contracts';
import { DATA_SOURCE, OutboxPump } from '@meld/db';
import { createProducer, type Producer } from '@meld/kafka';
import { KAFKA, type KafkaClient, metricsRegistry } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { DataSource } from 'typeorm';

/**
 * Publishes `sms_outbox` after each status change committed: the change to `meld.sms-status.v1`
 * (ADR 0154) and its timeline event to `meld.events.v1` (ADR 0157), each row to its `topic`.
 * A table of its own, so messaging never depends on another app's relay running.
 */
@Injectable()
export class SmsOutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly producer: Producer;
  private readonly pump: OutboxPump;

  constructor(@Inject(DATA_SOURCE) ds: DataSource, @Inject(KAFKA) client: KafkaClient) {
    this.producer = createProducer({ kafka: client.kafka, brokers: client.brokers, clientId: 'meld-messaging', metrics: metricsRegistry });
    this.pump = new OutboxPump(ds, {
      table: 'sms_outbox',
      publish: (topic, messages) => this.producer.send(topic, messages, { schema: topic === Topics.events ? eventsMessage : smsStatusChange }),
      metrics: metricsRegistry,
    });
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

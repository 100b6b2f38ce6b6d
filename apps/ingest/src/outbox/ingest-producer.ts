import { createProducer, type OutgoingMessage, type Producer, type SendOptions } from '@meld/kafka';
import { KAFKA, type KafkaClient, metricsRegistry } from '@meld/platform';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';

/**
 * The app's one Kafka producer (acks -1, in order), shared by the outbox relay and the
 * event write, on the platform's kafkajs client. Disconnected last, after the relay stopped.
 */
@Injectable()
export class IngestProducer implements OnApplicationShutdown {
  private readonly producer: Producer;

  constructor(@Inject(KAFKA) client: KafkaClient) {
    this.producer = createProducer({ kafka: client.kafka, brokers: client.brokers, clientId: 'meld-ingest', metrics: metricsRegistry });
  }

  send(topic: string, messages: readonly OutgoingMessage[], options?: SendOptions): Promise<void> {
    return this.producer.send(topic, messages, options);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.producer.disconnect();
  }
}

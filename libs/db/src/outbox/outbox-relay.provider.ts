import { createProducer } from '@meld/kafka';
import type { FactoryProvider, InjectionToken } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '../db.module';
import { OutboxRelay, type OutboxProducer, type OutboxRelayOptions } from './outbox-relay';

/** The app's Kafka client, as libs/platform provides it (KAFKA). */
interface KafkaClientLike {
  kafka: Kafka;
  brokers: string[];
}

export interface OutboxRelayProviderOptions extends OutboxRelayOptions {
  /**
   * Where the relay's producer comes from: one of its own on the app's Kafka client (`kafka`,
   * libs/platform's KAFKA token), closed by the relay after its pump stopped; or a producer the
   * app shares with other writers (`producer`), which the app closes.
   */
  producer: { kafka: InjectionToken; clientId: string } | { shared: InjectionToken };
}

/**
 * A Nest provider of one outbox relay (ADR 0211). `provide` is the app's class for it, an empty
 * subclass of OutboxRelay, so writers inject it by type and each app's relays stay apart:
 *
 *     export class AudienceOutboxRelay extends OutboxRelay {}
 *     providers: [outboxRelayProvider(AudienceOutboxRelay, { table: 'audience_outbox', ... })]
 */
export function outboxRelayProvider<T extends OutboxRelay>(
  provide: new (...args: ConstructorParameters<typeof OutboxRelay>) => T,
  options: OutboxRelayProviderOptions,
): FactoryProvider<T> {
  const { producer: source, ...relay } = options;
  if ('shared' in source) {
    return { provide, inject: [DATA_SOURCE, source.shared], useFactory: (ds: DataSource, producer: OutboxProducer) => new provide(ds, producer, relay) };
  }
  return {
    provide,
    inject: [DATA_SOURCE, source.kafka],
    useFactory: (ds: DataSource, client: KafkaClientLike) => {
      const producer = createProducer({ kafka: client.kafka, brokers: client.brokers, clientId: source.clientId, metrics: relay.metrics });
      return new provide(ds, producer, relay, () => producer.disconnect());
    },
  };
}

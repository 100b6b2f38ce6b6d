import { DATA_SOURCE, OutboxPump } from '@meld/db';
import { metricsRegistry } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { IngestProducer } from './ingest-producer';

/** Publishes ingest's outbox (contact changes) through the app's producer; writes nudge it. */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly pump: OutboxPump;

  constructor(@Inject(DATA_SOURCE) ds: DataSource, producer: IngestProducer) {
    // 100 ms of linger: at ~1,900 contacts/s that makes produce requests of ~200 contacts
    // instead of one per write (~100), and identity-merge steps as big; without it the merge
    // fell behind at half of its peak on the development broker (ADR 0090).
    this.pump = new OutboxPump(ds, { table: 'outbox', publish: (topic, messages) => producer.send(topic, messages), metrics: metricsRegistry, lingerMs: 100 });
  }

  onApplicationBootstrap(): void {
    this.pump.start();
  }

  nudge(): void {
    this.pump.nudge();
  }

  drainOnce(): Promise<number> {
    return this.pump.drainOnce();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.pump.stop();
  }
}

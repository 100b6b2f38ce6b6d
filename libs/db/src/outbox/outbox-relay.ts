import type { BeforeApplicationShutdown, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import type { ZodType } from 'zod';
import { outboxNotificationsOf } from './outbox-notifications';
import { type OutboxMessage, OutboxPump } from './outbox-pump';

/** What a relay publishes with: libs/kafka's producer (acks -1, in order). */
export interface OutboxProducer {
  send(topic: string, messages: readonly OutboxMessage[], options?: { schema?: ZodType<unknown> }): Promise<void>;
}

export interface OutboxRelayOptions {
  /** The app's outbox table (see OutboxPumpOptions.table). */
  table: string;
  /** The one topic of a single-topic outbox; otherwise each row's `topic` column. */
  topic?: string;
  /** Each topic's message schema, checked before sending; a topic not named is sent as written (checked by its writer). */
  schemas?: Iterable<readonly [string, ZodType<unknown>]>;
  lingerMs?: number;
  safetyPollMs?: number;
  metrics: Registry;
}

/**
 * One outbox drained into Kafka for the app's lifetime (ADR 0211): the pump starts with the app,
 * is woken by every committed write to its table (LISTEN/NOTIFY, ADR 0212) and by `nudge()`, and
 * stops before the app's connections close. Apps declare one with `outboxRelayProvider`.
 */
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly pump: OutboxPump;
  private unsubscribe?: () => Promise<void>;

  constructor(
    private readonly ds: DataSource,
    private readonly producer: OutboxProducer,
    options: OutboxRelayOptions,
    /** Closes a producer of the relay's own; unset when it is shared with writers that close it. */
    private readonly closeProducer?: () => Promise<void>,
  ) {
    const schemas = new Map(options.schemas);
    this.pump = new OutboxPump(ds, {
      ...options,
      publish: (topic, messages) => producer.send(topic, messages, { schema: schemas.get(topic) }),
    });
  }

  onApplicationBootstrap(): void {
    this.unsubscribe = outboxNotificationsOf(this.ds).subscribe(this.pump.table, () => this.pump.nudge());
    this.pump.start();
  }

  /** Rows were just committed in this process: publish them now (a notification may follow). */
  nudge(): void {
    this.pump.nudge();
  }

  drainOnce(): Promise<number> {
    return this.pump.drainOnce();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.unsubscribe?.();
    await this.pump.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.closeProducer?.();
  }
}

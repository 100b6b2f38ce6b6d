import type { TopicOutput } from '@meld/contracts';
import type { BeforeApplicationShutdown, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Gauge, type Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import type { ZodType } from 'zod';
import { type OutboxNotifications, outboxNotificationsOf } from './outbox-notifications';
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
  /**
   * The contracts' outputs (libs/contracts `Outputs`) of the topics whose rows are checked against
   * their schema before sending (ADR 0236); a topic not named is sent as written (checked by its writer).
   */
  outputs?: Iterable<Pick<TopicOutput<unknown>, 'topic' | 'schema'>>;
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
  private readonly metrics: Registry;

  constructor(
    private readonly ds: DataSource,
    producer: OutboxProducer,
    options: OutboxRelayOptions,
    /** Closes a producer of the relay's own; unset when it is shared with writers that close it. */
    private readonly closeProducer?: () => Promise<void>,
  ) {
    this.metrics = options.metrics;
    const schemas = new Map<string, ZodType<unknown>>([...(options.outputs ?? [])].map((o) => [o.topic, o.schema]));
    this.pump = new OutboxPump(ds, {
      ...options,
      publish: (topic, messages) => producer.send(topic, messages, { schema: schemas.get(topic) }),
    });
  }

  onApplicationBootstrap(): void {
    const notifications = outboxNotificationsOf(this.ds);
    this.unsubscribe = notifications.subscribe(this.pump.table, () => this.pump.nudge());
    exportListening(this.metrics, notifications);
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

const listeners = new WeakMap<Registry, Set<OutboxNotifications>>();

/** `meld_outbox_listening`: 0 while a process's pumps are on their safety poll only (ADR 0212). */
function exportListening(registry: Registry, notifications: OutboxNotifications): void {
  let set = listeners.get(registry);
  if (!set) {
    const all = new Set<OutboxNotifications>();
    listeners.set(registry, (set = all));
    new Gauge({
      name: 'meld_outbox_listening',
      help: '1 while the LISTEN connection that wakes the outbox relays is up; 0: rows of other processes wait for the 5 s safety poll',
      registers: [registry],
      collect() {
        this.set([...all].every((n) => n.listening) ? 1 : 0);
      },
    });
  }
  set.add(notifications);
}

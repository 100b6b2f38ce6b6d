import { Topics, contactChange, type ContactChange } from '@meld/contracts';
import { DeadLetterError, createConsumerRunner, topicHandler, type ConsumerRunner, type ConsumedMessage } from '@meld/kafka';
import { KAFKA, type KafkaClient, metricsRegistry } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AudienceOutboxRelay } from './audience-outbox.relay';
import { MergeRepository } from './merge.repository';

const START_RETRY_MS = 2000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Consumer group settings; tests use a group of their own so they never share partitions with running apps. */
export interface ContactsConsumerOptions {
  groupId: string;
  /** Where a new group starts (default true: a new deployment merges what is already there). */
  fromBeginning: boolean;
}

export const CONTACTS_CONSUMER_OPTIONS = Symbol('CONTACTS_CONSUMER_OPTIONS');

/** `MELD_IDENTITY_MERGE_GROUP` (default `identity-merge`). */
export function contactsConsumerOptions(env: NodeJS.ProcessEnv = process.env): ContactsConsumerOptions {
  return { groupId: env.MELD_IDENTITY_MERGE_GROUP || 'identity-merge', fromBeginning: true };
}

/**
 * Consumes `meld.contacts.v1` on the libs/kafka runner (per-key order, commit after
 * processing, retries then dead letter). Each message triggers one merge step for its
 * source contact; the step re-reads `source_contacts`, so the message is only a wake-up
 * and its payload never overrides the committed row. Store errors throw: retried.
 */
@Injectable()
export class ContactsConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('ContactsConsumer');
  private runner?: ConsumerRunner;
  private stopped = false;
  private starting?: Promise<void>;

  constructor(
    @Inject(KAFKA) private readonly client: KafkaClient,
    @Inject(CONTACTS_CONSUMER_OPTIONS) private readonly options: ContactsConsumerOptions,
    private readonly merge: MergeRepository,
    private readonly relay: AudienceOutboxRelay,
  ) {}

  /** A runner starts once; a failed start needs a fresh one. */
  private createRunner(): ConsumerRunner {
    const log = this.logger;
    return createConsumerRunner({
      kafka: this.client.kafka,
      brokers: this.client.brokers,
      clientId: 'meld-identity-merge',
      groupId: this.options.groupId,
      fromBeginning: this.options.fromBeginning,
      metrics: metricsRegistry,
      logger: {
        debug: () => undefined,
        info: (o, m) => log.log(`${m ?? ''} ${JSON.stringify(o)}`),
        warn: (o, m) => log.warn(`${m ?? ''} ${JSON.stringify(o)}`),
        error: (o, m) => log.error(`${m ?? ''} ${JSON.stringify(o)}`),
      },
      handlers: [topicHandler({ topic: Topics.contacts, schema: contactChange, handle: (m) => this.handle(m) })],
    });
  }

  /** False once the consumer crashed for good (for readiness). */
  isHealthy(): boolean {
    return this.runner?.isHealthy() ?? false;
  }

  async handle(message: ConsumedMessage<ContactChange>): Promise<void> {
    const { projectId, dataSourceId, userId } = message.value;
    // Project and data-source ids are uuids in Postgres: anything else can never merge.
    if (!UUID.test(projectId) || !UUID.test(dataSourceId)) throw new DeadLetterError('projectId and dataSourceId must be uuids');
    const result = await this.merge.mergeContact({ projectId, dataSourceId, userId });
    if (result.messages > 0) this.relay.nudge();
  }

  onApplicationBootstrap(): void {
    // Kafka may not answer yet: keep trying in the background, readiness reports it meanwhile.
    this.starting = (async () => {
      while (!this.stopped) {
        const runner = this.createRunner();
        this.runner = runner;
        try {
          await runner.start();
          return;
        } catch (err) {
          await runner.stop().catch(() => undefined);
          this.logger.warn(`contacts consumer could not start, retrying: ${err instanceof Error ? err.message : String(err)}`);
          await new Promise((r) => setTimeout(r, START_RETRY_MS));
        }
      }
    })();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.starting;
    await this.runner?.stop();
  }
}

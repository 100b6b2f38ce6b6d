import { Topics, contactChange, type ContactChange } from '@meld/contracts';
import { DeadLetterError, createConsumerRunner, topicHandler, type ConsumedMessage } from '@meld/kafka';
import { BackgroundConsumer, type GroupOptions, KAFKA, type KafkaClient, hostedRunnerOptions, metricsRegistry, sessionTimeoutFromEnv } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Histogram } from 'prom-client';
import { AudienceOutboxRelay } from './audience-outbox.relay';
import { StepBatcher } from './step-batcher';
import { MergeContactsCommand } from './usecases/merge-contacts/merge-contacts.command';
import { MergeContacts, type MergeStepResult } from './usecases/merge-contacts/merge-contacts.usecase';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Consumer group settings; tests use a group of their own so they never share partitions with running apps. */
export interface ContactsConsumerOptions extends GroupOptions {
  /** Most source contacts in one merge step (default 500). */
  maxStepContacts?: number;
}

export const CONTACTS_CONSUMER_OPTIONS = Symbol('CONTACTS_CONSUMER_OPTIONS');

const DEFAULT_STEP_CONTACTS = 500;
const PARTITIONS_AT_ONCE = 32;

/** `MELD_IDENTITY_MERGE_GROUP` (default `identity-merge`), `MELD_KAFKA_SESSION_TIMEOUT_MS`, `MELD_MERGE_STEP_CONTACTS` (default 500). */
export function contactsConsumerOptions(env: NodeJS.ProcessEnv = process.env): ContactsConsumerOptions {
  const step = Number(env.MELD_MERGE_STEP_CONTACTS);
  return {
    groupId: env.MELD_IDENTITY_MERGE_GROUP || 'identity-merge',
    fromBeginning: true,
    sessionTimeoutMs: sessionTimeoutFromEnv(env),
    maxStepContacts: Number.isInteger(step) && step > 0 ? step : DEFAULT_STEP_CONTACTS,
  };
}

function histogram(name: string, help: string, buckets: number[]): Histogram {
  return (metricsRegistry.getSingleMetric(name) as Histogram | undefined) ?? new Histogram({ name, help, buckets, registers: [metricsRegistry] });
}

/**
 * Consumes `meld.contacts.v1` on the libs/kafka runner (per-key order, commit after
 * processing, retries then dead letter). A message only wakes the merge up: the step re-reads
 * `source_contacts`, so its payload never overrides the committed row. First attempts go
 * through a StepBatcher, which merges the contacts of a project that are in flight together in
 * one step; a retry runs alone, so a message that keeps failing is dead-lettered by itself.
 * Store errors throw: retried.
 */
@Injectable()
export class ContactsConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly consumer: BackgroundConsumer;
  private readonly batcher: StepBatcher<MergeStepResult>;

  constructor(
    @Inject(KAFKA) client: KafkaClient,
    @Inject(CONTACTS_CONSUMER_OPTIONS) options: ContactsConsumerOptions,
    private readonly mergeContacts: MergeContacts,
    private readonly relay: AudienceOutboxRelay,
  ) {
    const maxStep = options.maxStepContacts ?? DEFAULT_STEP_CONTACTS;
    const sizes = histogram('meld_merge_step_contacts', 'Source contacts per merge step (first attempts, batched per project)', [1, 5, 20, 50, 100, 200, 500, 1000]);
    const durations = histogram('meld_merge_step_seconds', 'Duration of a merge step (first attempts, batched per project)', [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]);
    this.batcher = new StepBatcher<MergeStepResult>({ step: (projectId, contacts) => mergeContacts.execute(MergeContactsCommand.create(projectId, contacts)) }, maxStep, (_p, n, result, seconds) => {
      sizes.observe(n);
      durations.observe(seconds);
      if (result.messages > 0) this.relay.nudge();
    });
    const logger = new Logger('ContactsConsumer');
    const runnerOptions = hostedRunnerOptions({ ...options, client, clientId: 'meld-identity-merge', logger });
    this.consumer = new BackgroundConsumer({
      name: options.groupId,
      logger,
      create: () =>
        createConsumerRunner({
          ...runnerOptions,
          // Keys in flight per partition batch: what one step can take (the runner's default 16
          // would cap steps at 16 contacts per partition batch).
          concurrency: maxStep,
          // Every partition batch of a fetch at once, so they feed the same steps: the runner's
          // default of 2 gave steps of ~19 contacts on the development broker, whose fetches return
          // one produce request per partition (~17 of the relay's messages over 30 partitions).
          partitionsConsumedConcurrently: PARTITIONS_AT_ONCE,
          handlers: [topicHandler({ topic: Topics.contacts, schema: contactChange, handle: (m) => this.handle(m) })],
        }),
    });
  }

  /** False once the consumer crashed for good (for readiness). */
  isHealthy(): boolean {
    return this.consumer.isHealthy();
  }

  async handle(message: ConsumedMessage<ContactChange>): Promise<void> {
    const { projectId, dataSourceId, userId } = message.value;
    // Project and data-source ids are uuids in Postgres: anything else can never merge.
    if (!UUID.test(projectId) || !UUID.test(dataSourceId)) throw new DeadLetterError('projectId and dataSourceId must be uuids');
    if (message.attempt === 1) {
      await this.batcher.submit(projectId, { dataSourceId, userId });
      return;
    }
    const result = await this.mergeContacts.execute(MergeContactsCommand.forContact({ projectId, dataSourceId, userId }));
    if (result.messages > 0) this.relay.nudge();
  }

  onApplicationBootstrap(): void {
    this.consumer.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.consumer.stop();
  }
}

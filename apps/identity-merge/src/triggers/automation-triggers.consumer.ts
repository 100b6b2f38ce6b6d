import { Outputs, Topics, eventsMessage, isEventsErased, type AutomationTrigger, type EventAccepted, type EventsMessage } from '@meld/contracts';
import { DeadLetterError, RetriableError, createConsumerRunner, createProducer, topicHandler, type ConsumedMessage, type Producer } from '@meld/kafka';
import { BackgroundConsumer, type GroupOptions, KAFKA, type KafkaClient, hostedRunnerOptions, metricsRegistry, sessionTimeoutFromEnv } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Counter } from 'prom-client';
import { UUID } from '../merge/contacts.consumer';
import { decideTrigger } from './trigger-decision';
import { TriggerMembershipRepository } from './trigger-membership.repository';

export interface TriggersConsumerOptions extends GroupOptions {
  /** How long after a contact's latest write its automation events wait for the merge (default 5 min). */
  mergeWaitMs: number;
}

export const TRIGGERS_CONSUMER_OPTIONS = Symbol('TRIGGERS_CONSUMER_OPTIONS');

/** `MELD_IDENTITY_MERGE_TRIGGERS_GROUP` (default `identity-merge-triggers`), `MELD_TRIGGER_MERGE_WAIT_MS`, `MELD_KAFKA_SESSION_TIMEOUT_MS`. */
export function triggersConsumerOptions(env: NodeJS.ProcessEnv = process.env): TriggersConsumerOptions {
  const wait = Number(env.MELD_TRIGGER_MERGE_WAIT_MS);
  return {
    groupId: env.MELD_IDENTITY_MERGE_TRIGGERS_GROUP || 'identity-merge-triggers',
    fromBeginning: true,
    sessionTimeoutMs: sessionTimeoutFromEnv(env),
    mergeWaitMs: Number.isInteger(wait) && wait >= 0 ? wait : 300_000,
  };
}

function triggersCounter(): Counter<'outcome'> {
  const name = 'meld_automation_triggers_total';
  return (
    (metricsRegistry.getSingleMetric(name) as Counter<'outcome'> | undefined) ??
    new Counter({ name, help: 'Automation events by outcome: published, published_stale (merge still behind after the wait), dead_lettered', labelNames: ['outcome'], registers: [metricsRegistry] })
  );
}

/**
 * Turns automation events into `meld.automation-triggers.v1` keyed `project/audienceId`.
 * identity-merge owns the membership, so it resolves (data source, user id) → audience id:
 * a consumer group of its own on `meld.events.v1` that passes over everything but events
 * ingest flagged `automation`. The trigger is published (acks -1) before the offset is
 * committed, so delivery is at-least-once: after a crash a trigger may be published twice,
 * and consumers drop a repeated (projectId, eventId).
 *
 * When the merge has not caught up with the contact yet, the message is retried (the
 * runner's backoff, per-key order kept) until `mergeWaitMs` after the contact's latest
 * write; then trigger-decision.ts decides. Store errors retry too.
 */
@Injectable()
export class AutomationTriggersConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('AutomationTriggers');
  private readonly consumer: BackgroundConsumer;
  private readonly producer: Producer;
  private readonly outcomes = triggersCounter();

  constructor(
    @Inject(KAFKA) client: KafkaClient,
    @Inject(TRIGGERS_CONSUMER_OPTIONS) private readonly options: TriggersConsumerOptions,
    private readonly membership: TriggerMembershipRepository,
  ) {
    this.producer = createProducer({ kafka: client.kafka, brokers: client.brokers, clientId: 'meld-identity-merge-triggers', metrics: metricsRegistry });
    const runnerOptions = hostedRunnerOptions({ ...options, client, clientId: 'meld-identity-merge-triggers', logger: this.logger });
    this.consumer = new BackgroundConsumer({
      name: options.groupId,
      logger: this.logger,
      create: () =>
        createConsumerRunner({
          ...runnerOptions,
          producer: this.producer,
          // A long budget for store outages; waiting for the merge is bounded by mergeWaitMs.
          backoff: { maxAttempts: 1000, initialDelayMs: 200, maxDelayMs: 2000 },
          handlers: [topicHandler({ topic: Topics.events, schema: eventsMessage, handle: (m) => this.handle(m) })],
        }),
    });
  }

  isHealthy(): boolean {
    return this.consumer.isHealthy();
  }

  /** Synchronous for everything that is not an automation event (most messages). */
  handle(message: ConsumedMessage<EventsMessage>): Promise<void> | void {
    const event = message.value;
    if (isEventsErased(event) || !event.automation) return;
    return this.resolve(message as ConsumedMessage<EventAccepted>);
  }

  private async resolve(message: ConsumedMessage<EventAccepted>): Promise<void> {
    const e = message.value;
    if (!UUID.test(e.projectId) || !UUID.test(e.dataSourceId)) throw new DeadLetterError('projectId and dataSourceId must be uuids');
    const decision = decideTrigger(await this.membership.membership(e.projectId, e.dataSourceId, e.userId), this.options.mergeWaitMs);
    if (decision.kind === 'wait') throw new RetriableError(decision.reason);
    if (decision.kind === 'dead-letter') {
      this.outcomes.inc({ outcome: 'dead_lettered' });
      // Not the event id: sources build it from an order or message key holding an email or a
      // number (ADR 0354), and this reason is logged; the dead letter's value has the event.
      throw new DeadLetterError(`automation trigger of a ${e.eventType} event: ${decision.reason}`);
    }
    const trigger: AutomationTrigger = {
      schemaVersion: 1,
      projectId: e.projectId,
      audienceId: decision.audienceId,
      dataSourceId: e.dataSourceId,
      userId: e.userId,
      eventId: e.eventId,
      eventType: e.eventType,
      eventDate: e.eventDate,
      receivedAt: e.receivedAt,
      parameters: e.parameters,
    };
    await this.producer.publish(Outputs.automationTriggers, [trigger]);
    // Named by project, data source, type and audience, never by the event id (ADR 0354: it can hold an email or a number).
    if (decision.stale) this.logger.warn(`trigger of a ${e.eventType} event of data source ${e.dataSourceId} (project ${e.projectId}) published with audience ${decision.audienceId}: the merge was still behind the contact ${this.options.mergeWaitMs} ms after its write`);
    this.outcomes.inc({ outcome: decision.stale ? 'published_stale' : 'published' });
  }

  onApplicationBootstrap(): void {
    this.consumer.start();
  }

  /** Resolves once the group is joined (tests). */
  started(): Promise<void> {
    return this.consumer.started();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.consumer.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.producer.disconnect();
  }
}

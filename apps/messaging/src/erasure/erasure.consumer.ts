import { Topics, audienceChange, type AudienceChange } from '@meld/contracts';
import { DeadLetterError, createSinkRunner, sinkHandler } from '@meld/kafka';
import { BackgroundConsumer, type GroupOptions, KAFKA, type KafkaClient, hostedRunnerOptions, loadConfig, sessionTimeoutFromEnv } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { z } from 'zod';
import { delivers } from '../messaging-role';
import { isUuid } from '../sms/sms.repository';
import { type DeletedContact, SmsRedaction } from './sms-redaction';

/** `MELD_MESSAGING_ERASURE_GROUP` (default `messaging-erasure`), `MELD_KAFKA_SESSION_TIMEOUT_MS`; a new group starts at the topic's beginning. */
export function erasureConsumerOptions(env: NodeJS.ProcessEnv = process.env): GroupOptions {
  const { MELD_MESSAGING_ERASURE_GROUP } = loadConfig(z.object({ MELD_MESSAGING_ERASURE_GROUP: z.string().min(1).default('messaging-erasure') }), env);
  return { groupId: MELD_MESSAGING_ERASURE_GROUP, fromBeginning: true, sessionTimeoutMs: sessionTimeoutFromEnv(env) };
}

/**
 * The deleted contact a message names: a tombstone, or nothing. Project and audience ids are
 * uuids in Postgres: any other value is dead-lettered at once (it fails the same way every time).
 */
export function deletedContact(m: AudienceChange): DeletedContact | undefined {
  if (m.kind !== 'tombstone') return undefined;
  if (!isUuid(m.projectId) || !isUuid(m.audienceId)) throw new DeadLetterError('projectId and audienceId must be uuids');
  return { projectId: m.projectId, audienceId: m.audienceId, members: m.removedDsContactIds ?? [] };
}

/**
 * `meld.audience.v1` tombstones → the redaction of the deleted contacts' SMS (ADR 0358), on the
 * libs/kafka sink runner as the probes sinks (ADR 0339): tombstones taken while the last write
 * ran are redacted in one statement, offsets committed after it; a store outage is retried until
 * Postgres answers, a message that is no audience change dead-lettered at once. Other write
 * failures are retried many times before their tombstones are dead-lettered: a dead letter is an
 * erasure left undone until an operator replays it. The write is idempotent (a redacted message
 * is not written again), so a redelivery after a crash is harmless. Run by the processes that
 * deliver (ADR 0253): background work, not requests. Logs carry counts, never ids of people.
 */
@Injectable()
export class ErasureConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('SmsErasure');
  private readonly consumer: BackgroundConsumer;

  constructor(@Inject(KAFKA) client: KafkaClient, redaction: SmsRedaction) {
    const options = erasureConsumerOptions();
    const common = hostedRunnerOptions({ ...options, client, clientId: 'meld-messaging-erasure', logger: this.logger });
    const sink = sinkHandler({
      topic: Topics.audience,
      schema: audienceChange,
      toRow: deletedContact,
      write: async (rows: DeletedContact[]) => {
        const n = await redaction.redact(rows);
        if (n > 0) this.logger.log(`redacted ${n} SMS of ${rows.length} deleted audience contact(s)`);
      },
    });
    this.consumer = new BackgroundConsumer({
      name: options.groupId,
      logger: this.logger,
      create: () => createSinkRunner({ ...common, sink, backoff: { maxAttempts: 1000, initialDelayMs: 200, maxDelayMs: 10_000 }, maxRows: 1000, lingerMs: 50 }),
    });
  }

  /** Resolves once the group is joined (tests). */
  started(): Promise<void> {
    return this.consumer.started();
  }

  onApplicationBootstrap(): void {
    if (delivers()) this.consumer.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.consumer.stop();
  }
}

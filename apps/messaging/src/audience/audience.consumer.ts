import { Topics, audienceChange, type AudienceChange } from '@meld/contracts';
import { DeadLetterError, createSinkRunner, sinkHandler } from '@meld/kafka';
import { BackgroundConsumer, type GroupOptions, KAFKA, type KafkaClient, hostedRunnerOptions, loadConfig, sessionTimeoutFromEnv } from '@meld/platform';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { z } from 'zod';
import { delivers } from '../messaging-role';
import { isUuid } from '../sms/sms.repository';
import { type MergedMembers, SmsAudienceBackfill } from './sms-audience-backfill';
import { type DeletedContact, SmsRedaction } from './sms-redaction';

/** What one message of `meld.audience.v1` asks of the SMS log. */
export type AudienceRow = { kind: 'tombstone'; contact: DeletedContact } | { kind: 'snapshot'; merged: MergedMembers };

/** A member `<dataSourceId>/<E.164>`: the form of our own contact of a number (ADR 0184); other members name no message. */
const NUMBER_MEMBER = /^[^/]+\/\+[1-9][0-9]{1,14}$/;

/**
 * `MELD_MESSAGING_ERASURE_GROUP` (default `messaging-erasure`; named when the group only erased, kept so a
 * deployment's group and its offsets stay), `MELD_KAFKA_SESSION_TIMEOUT_MS`; a new group starts at the topic's beginning.
 */
export function audienceConsumerOptions(env: NodeJS.ProcessEnv = process.env): GroupOptions {
  const { MELD_MESSAGING_ERASURE_GROUP } = loadConfig(z.object({ MELD_MESSAGING_ERASURE_GROUP: z.string().min(1).default('messaging-erasure') }), env);
  return { groupId: MELD_MESSAGING_ERASURE_GROUP, fromBeginning: true, sessionTimeoutMs: sessionTimeoutFromEnv(env) };
}

/**
 * What a message asks: a tombstone's deleted contact; a snapshot's members that may be our own
 * contact of a number (their messages without audience id get it, ADR 0184); nothing for a merge or
 * a snapshot without such a member. Project and audience ids are uuids in Postgres: a tombstone
 * naming any other value is dead-lettered at once (it fails the same way every time); a snapshot
 * of a project that is no uuid has no message to give an id to.
 */
export function audienceRow(m: AudienceChange): AudienceRow | undefined {
  if (m.kind === 'snapshot') {
    const members = m.dsContactIds.filter((ref) => NUMBER_MEMBER.test(ref));
    return members.length && isUuid(m.projectId) ? { kind: 'snapshot', merged: { projectId: m.projectId, members } } : undefined;
  }
  if (m.kind !== 'tombstone') return undefined;
  if (!isUuid(m.projectId) || !isUuid(m.audienceId)) throw new DeadLetterError('projectId and audienceId must be uuids');
  return { kind: 'tombstone', contact: { projectId: m.projectId, audienceId: m.audienceId, members: m.removedDsContactIds ?? [] } };
}

/** Consecutive rows of one kind, in the order taken: each run is one statement, and a tombstone never overtakes a snapshot before it (or after). */
function runs(rows: readonly AudienceRow[]): AudienceRow[][] {
  const out: AudienceRow[][] = [];
  for (const row of rows) {
    const last = out.at(-1);
    if (last && last[0]!.kind === row.kind) last.push(row);
    else out.push([row]);
  }
  return out;
}

/**
 * `meld.audience.v1` → the SMS log: a tombstone redacts the deleted contact's SMS (ADR 0358); a
 * snapshot naming our own contact of a number gives the messages sent to that number before it was
 * merged their audience id (ADR 0184). One group for both (ADR 0358): one reading of the topic, in
 * its order. On the libs/kafka sink runner as the probes sinks (ADR 0339): the rows taken while the
 * last write ran are written in one statement per run of one kind, offsets committed after them; a
 * store outage is retried until Postgres answers, a message that is no audience change
 * dead-lettered at once. Other write failures are retried many times before their messages are
 * dead-lettered: a dead letter is an erasure (or an id) left undone until an operator replays it.
 * Both writes are idempotent (a redacted message is not written again, a message with an id is not
 * given one), so a redelivery after a crash is harmless. Run by the processes that deliver (ADR
 * 0253): background work, not requests. Logs carry counts, never ids of people.
 */
@Injectable()
export class AudienceConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('SmsAudience');
  private readonly consumer: BackgroundConsumer;

  constructor(@Inject(KAFKA) client: KafkaClient, redaction: SmsRedaction, backfill: SmsAudienceBackfill) {
    const options = audienceConsumerOptions();
    const common = hostedRunnerOptions({ ...options, client, clientId: 'meld-messaging-erasure', logger: this.logger });
    const sink = sinkHandler({
      topic: Topics.audience,
      schema: audienceChange,
      toRow: audienceRow,
      write: async (rows: AudienceRow[]) => {
        for (const run of runs(rows)) {
          if (run[0]!.kind === 'tombstone') {
            const contacts = run.flatMap((r) => (r.kind === 'tombstone' ? [r.contact] : []));
            const n = await redaction.redact(contacts);
            if (n > 0) this.logger.log(`redacted ${n} SMS of ${contacts.length} deleted audience contact(s)`);
          } else {
            const n = await backfill.merged(run.flatMap((r) => (r.kind === 'snapshot' ? [r.merged] : [])));
            if (n > 0) this.logger.log(`gave ${n} SMS sent before their contact was merged its audience id`);
          }
        }
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

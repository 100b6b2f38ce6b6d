import { type EventAccepted, eventAccepted, keys, Topics } from '@meld/contracts';
import { metricsRegistry } from '@meld/platform';
import type { OpenTransaction } from '@meld/db';
import { Injectable, Logger } from '@nestjs/common';
import { Counter } from 'prom-client';
import type { PoolClient } from 'pg';
import { isPlainObject, userIdError } from '../../../contacts/contact-item';
import { ContactPatches } from '../../../contacts/contact-patches';
import { type ContactWrite, SourceContactsRepository } from '../../../contacts/source-contacts.repository';
import { IngestProducer } from '../../../outbox/ingest-producer';
import { OutboxRelay } from '../../../outbox/outbox-relay';
import { StreamScope } from '../../../stream/stream-scope';
import { echoUserId, type ItemOutcome, MAX_BATCH_ITEMS, parseBatch, writeOutcome } from '../../../write/write-batch';
import type { WriteCommand } from '../../../write/write.command';
import { type ParsedEvent, eventIdError, insideAutomationWindow, parseEvent } from '../../event-item';
import { type EventWriteContext, EventsRepository, ResentEventIds } from '../../events.repository';
import { timed } from '../../write-stages';

const USER_DATA_SKIP = new Set(['_user_id']);

/**
 * `POST /stream/events`, every rule of the ingest spec in order:
 * 1. each item is checked (required fields, a declared event type, parameters, date);
 * 2. `_user_data` is upserted first through the contact path (its values dated by the
 *    event, so an older event does not overwrite newer values); if that fails the event
 *    item fails (rule 2);
 * 3. an event-only item for a contact that does not live in this data source is skipped
 *    silently: success, nothing produced, its id not marked (rule 1);
 * 4. dedup: the write's transaction locks the live contacts and marks the new ids (one
 *    statement), produces them to `meld.events.v1` (events of `automation: true` types within
 *    ±1 h flagged `automation`, rule 4: identity-merge turns them into triggers keyed by the
 *    audience contact) and waits for the acks, then COMMITs; only then the answer. A resent
 *    id is a success produced no more.
 * A batch without `_user_data` marks with its BEGIN and context lookup, before its checks
 * (markThenCheck: two round trips to Postgres); the others check first (checkThenMark: three).
 */
@Injectable()
export class WriteEvents {
  constructor(
    private readonly scope: StreamScope,
    private readonly events: EventsRepository,
    private readonly contacts: SourceContactsRepository,
    private readonly patches: ContactPatches,
    private readonly producer: IngestProducer,
    private readonly relay: OutboxRelay,
  ) {}

  async execute(command: WriteCommand) {
    const marks = markableIds(command.body);
    if (!marks) return this.checkThenMark(command, false);
    try {
      return await this.markThenCheck(command, marks);
    } catch (err) {
      if (!(err instanceof ResentEventIds)) throw err;
      return this.checkThenMark(command, true);
    }
  }

  /**
   * Two round trips for a batch without `_user_data` (nearly all): BEGIN, the context and the
   * lock-and-mark of every item whose ids look valid in one (EventsRepository.openAndMark),
   * then the checks, the produce and COMMIT, the marks of items that failed taken back first.
   * A batch with an id accepted before goes the checked way, with ON CONFLICT.
   *
   * The answer waits for the Kafka acks, not for the COMMIT (commitAfterAnswer).
   */
  private async markThenCheck(command: WriteCommand, marks: { userId: string; eventId: string }[]) {
    const { projectId, dataSourceId } = command;
    const opened = await timed('open', () => this.events.openAndMark(projectId, dataSourceId, eventTypeNames(command.body), marks));
    if (!opened) return this.scope.notFound();
    const { tx, context, marked } = opened;
    try {
      this.scope.requireUsable(command, context.dataSourceId);
      const items = parseBatch(command.body, 'events');
      const { outcomes, accepted } = await this.check(command, items, context);
      const candidates = accepted.filter((e): e is ParsedEvent => e !== null);
      const produce = candidates.filter((e) => marked.live.has(e.userId) && marked.fresh.has(e.eventId));
      if (produce.length > 0) {
        const valid = new Set(candidates.map((e) => e.eventId));
        const unmark = [...marked.fresh].filter((id) => !valid.has(id));
        await timed('transaction', async () => {
          await this.events.unmark(tx.client, projectId, unmark);
          await this.produce(command, produce);
        });
        commitAfterAnswer(tx);
      }
      return writeOutcome(outcomes);
    } finally {
      await tx.release();
    }
  }

  /** Items checked against the event types; an item that fails is null in `accepted`, its errors in `outcomes`. */
  private check(command: WriteCommand, items: Record<string, unknown>[], context: EventWriteContext) {
    return timed('validate', () => {
      const outcomes: ItemOutcome[] = items.map((item) => ({ status: 'success', _user_id: echoUserId(item._user_id) }));
      const accepted: (ParsedEvent | null)[] = items.map((item, i) => {
        const parsed = parseEvent(item, context.types, command.receivedAt);
        if (parsed.ok) return parsed.event;
        outcomes[i] = { status: 'error', _user_id: echoUserId(item._user_id), errors: parsed.errors };
        return null;
      });
      return { outcomes, accepted };
    });
  }

  /** Three round trips: the context, the checks and `_user_data`, then lock-and-mark, produce, COMMIT. */
  private async checkThenMark(command: WriteCommand, resent: boolean) {
    const { projectId, dataSourceId } = command;
    const opened = await timed('context', () => this.events.open(projectId, dataSourceId, eventTypeNames(command.body)));
    if (!opened) return this.scope.notFound();
    const { tx, context } = opened;
    try {
      this.scope.requireUsable(command, context.dataSourceId);
      const items = parseBatch(command.body, 'events');
      const { outcomes, accepted } = await this.check(command, items, context);

      // Rule 2: `_user_data` before the event, one transaction (of its own) for the batch's contacts.
      const withData = accepted.flatMap((e, i) => (e?.userData ? [i] : []));
      if (withData.length > 0) await this.upsertUserData(command, accepted, outcomes, withData);

      // Rule 1: event-only items of contacts that do not exist here are skipped silently. The
      // live contacts stay locked (FOR SHARE) until the events are on the topic: a delete racing
      // this write commits after them, so its erase marker follows them (EventsRepository.lockAndMark).
      const candidates = accepted.filter((e): e is ParsedEvent => e !== null);
      if (candidates.length > 0) {
        await timed('transaction', async () => {
          await this.markAndProduce(tx.client, command, candidates, resent);
          await tx.commit();
        }).catch(async (err: unknown) => {
          if (!(err instanceof ResentEventIds)) throw err;
          await tx.release();
          return timed('transaction', () => this.events.transaction((again) => this.markAndProduce(again, command, candidates, true)));
        });
      }
      return writeOutcome(outcomes);
    } finally {
      // Rolls back whatever was not committed: a refused batch, one with nothing to produce, a failure.
      await tx.release();
    }
  }

  private async upsertUserData(command: WriteCommand, accepted: (ParsedEvent | null)[], outcomes: ItemOutcome[], withData: number[]): Promise<void> {
    const { projectId, dataSourceId, receivedAt } = command;
    await this.contacts.transaction(async (tx) => {
      const results = await this.patches.prepare(
        tx,
        projectId,
        withData.map((i) => ({ attributes: accepted[i]!.userData!, skip: USER_DATA_SKIP })),
      );
      const writes: ContactWrite[] = [];
      withData.forEach((i, n) => {
        const result = results[n];
        const event = accepted[i]!;
        if (result.ok) {
          writes.push({ userId: event.userId, patch: result.patch, at: event.eventDate });
          return;
        }
        const errors = Object.fromEntries(Object.entries(result.errors).map(([name, messages]) => [`_user_data.${name}`, messages]));
        outcomes[i] = { status: 'error', _user_id: event.userId, errors };
        accepted[i] = null;
      });
      await this.contacts.upsert(tx, projectId, dataSourceId, writes, receivedAt);
    });
    this.relay.nudge();
  }

  /** In the write's transaction: lock and mark, produce the fresh events and wait for the acks (COMMIT is the caller's). */
  private async markAndProduce(tx: PoolClient, command: WriteCommand, candidates: ParsedEvent[], resent: boolean): Promise<void> {
    const { projectId, dataSourceId } = command;
    const { live, fresh } = await this.events.lockAndMark(tx, projectId, dataSourceId, candidates, { resent });
    const seen = new Set<string>();
    const produce = candidates.filter((e) => {
      // Not live (rule 1) or a duplicate: success, not produced (again).
      if (!live.has(e.userId) || !fresh.has(e.eventId) || seen.has(e.eventId)) return false;
      seen.add(e.eventId);
      return true;
    });
    await this.produce(command, produce);
  }

  /** The events to `meld.events.v1`, resolved once Kafka acked them. */
  private produce(command: WriteCommand, events: ParsedEvent[]): Promise<void> {
    return timed('produce', () => this.producer.send(Topics.events, events.map((e) => eventMessage(command, e)), { schema: eventAccepted }));
  }
}

const commitFailures = new Counter({
  name: 'meld_ingest_event_mark_commit_failures_total',
  help: 'Event writes answered whose event-id marks did not commit (a resend of those ids is produced again)',
  registers: [metricsRegistry],
});
const log = new Logger('write-events');

/**
 * COMMITs the marks after the answer. The events are durable once Kafka acked them, and that
 * is what the 202 waits for; the marks only keep a later resend of the same ids off the topic.
 * Until the COMMIT they still do their job: a concurrent resend waits on the uncommitted ids,
 * and a delete of the contact on its FOR SHARE lock (its erase marker follows these events).
 * A failed COMMIT (Postgres down, ingest killed) loses the marks, which asyncCommit already
 * allows (EventsRepository.open): a resend is then on the topic twice, and every reader keeps
 * one copy per event id. What it buys: the COMMIT's round trip, a wait for a Postgres backend
 * to get a core on a busy box, leaves the request's latency.
 */
function commitAfterAnswer(tx: OpenTransaction<unknown>): void {
  void timed('commit', () => tx.commit()).catch((err: unknown) => {
    commitFailures.inc();
    log.error(`event-id marks not committed after the answer: ${(err as Error).message}`);
  });
}

/** The event types a body names, looked up with the data source before the body is checked. */
function eventTypeNames(body: unknown): string[] {
  if (!Array.isArray(body) || body.length > MAX_BATCH_ITEMS) return [];
  const names = new Set<string>();
  for (const item of body) if (isPlainObject(item) && typeof item._event_type === 'string' && !item._event_type.includes('\u0000')) names.add(item._event_type);
  return [...names];
}

/**
 * The ids to mark before the items are checked: those of every item whose `_user_id` and
 * `_event_id` pass their checks. Null when the batch must be checked first: not a batch of
 * 1-100 items, or an item carries `_user_data` (its upsert may create the contact that
 * makes the event live, so the live users are known only after it).
 */
function markableIds(body: unknown): { userId: string; eventId: string }[] | null {
  if (!Array.isArray(body) || body.length === 0 || body.length > MAX_BATCH_ITEMS) return null;
  const marks: { userId: string; eventId: string }[] = [];
  for (const item of body) {
    if (!isPlainObject(item)) continue;
    if (item._user_data !== undefined && item._user_data !== null) return null;
    if (userIdError(item._user_id) === null && eventIdError(item._event_id) === null) marks.push({ userId: item._user_id as string, eventId: item._event_id as string });
  }
  return marks;
}

function eventMessage({ projectId, dataSourceId, receivedAt }: WriteCommand, e: ParsedEvent) {
  const value: EventAccepted = {
    schemaVersion: 1,
    projectId,
    dataSourceId,
    userId: e.userId,
    eventId: e.eventId,
    eventType: e.eventType.uid,
    eventDate: e.eventDate,
    receivedAt,
    parameters: e.parameters,
    ...(e.userData ? { userData: stripUserId(e.userData) } : {}),
    // Rule 4, decided here where the type's flag and the reception time are known;
    // identity-merge publishes the trigger once it knows the audience contact.
    ...(e.eventType.automation && insideAutomationWindow(e.eventDate, receivedAt) ? { automation: true } : {}),
  };
  return { key: keys.sourceContact(projectId, dataSourceId, e.userId), value };
}

function stripUserId(data: Record<string, unknown>): EventAccepted['userData'] {
  const { _user_id: _, ...rest } = data;
  return rest as EventAccepted['userData'];
}

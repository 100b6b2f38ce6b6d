import { type EventAccepted, Outputs } from '@meld/contracts';
import { Injectable } from '@nestjs/common';
import { ContactPatches } from '../../../contacts/contact-patches';
import { type ContactWrite, SourceContactsRepository, stateTooLargeMessage } from '../../../contacts/source-contacts.repository';
import { IngestProducer } from '../../../outbox/ingest-producer';
import { OutboxRelay } from '../../../outbox/outbox-relay';
import { StreamScope } from '../../../stream/stream-scope';
import { echoUserId, type ItemOutcome, parseBatch, writeOutcome } from '../../../write/write-batch';
import type { WriteCommand } from '../../../write/write.command';
import { EventDedupPolicy } from '../../dedup/event-dedup.policy';
import { type ParsedEvent, insideAutomationWindow, parseEvent } from '../../event-item';
import type { EventWriteContext } from '../../events.repository';
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
 * 4. dedup: the write's transaction locks the live contacts and marks the new ids, produces
 *    them to `meld.events.v1` (events of `automation: true` types within ±1 h flagged
 *    `automation`, rule 4: identity-merge turns them into triggers keyed by the audience
 *    contact) and waits for the acks; only then the answer. A resent id is a success produced
 *    no more. How the ids are marked, and in how many round trips, is EventDedupPolicy's.
 */
@Injectable()
export class WriteEvents {
  constructor(
    private readonly scope: StreamScope,
    private readonly dedup: EventDedupPolicy,
    private readonly contacts: SourceContactsRepository,
    private readonly patches: ContactPatches,
    private readonly producer: IngestProducer,
    private readonly relay: OutboxRelay,
  ) {}

  async execute(command: WriteCommand) {
    const write = await this.dedup.open(command);
    if (!write) return this.scope.notFound();
    try {
      this.scope.requireUsable(command, write.context.dataSourceId);
      this.scope.requireWritable(write.context.connector);
      const items = parseBatch(command.body, 'events');
      const { outcomes, accepted } = await this.check(command, items, write.context);
      // Rule 2: `_user_data` before the event, one transaction (of its own) for the batch's contacts,
      // committed before the dedup's transaction opens: `write` holds no connection meanwhile (ADR 0227).
      const withData = accepted.flatMap((e, i) => (e?.userData ? [i] : []));
      if (withData.length > 0) await this.upsertUserData(command, accepted, outcomes, withData);
      // Rule 1 and the dedup: only events of live contacts with new ids reach the topic.
      const candidates = accepted.filter((e): e is ParsedEvent => e !== null);
      await write.produceFresh(candidates, (fresh) => this.produce(command, fresh));
      return writeOutcome(outcomes);
    } finally {
      // Rolls back whatever was not committed: a refused batch, one with nothing to produce, a failure.
      await write.release();
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

  private async upsertUserData(command: WriteCommand, accepted: (ParsedEvent | null)[], outcomes: ItemOutcome[], withData: number[]): Promise<void> {
    const { projectId, dataSourceId, receivedAt } = command;
    await this.contacts.transaction(async (tx) => {
      const results = await this.patches.prepare(
        tx,
        projectId,
        withData.map((i) => ({ attributes: accepted[i]!.userData!, skip: USER_DATA_SKIP })),
      );
      const writes: ContactWrite[] = [];
      const itemOf: number[] = [];
      withData.forEach((i, n) => {
        const result = results[n];
        const event = accepted[i]!;
        if (result.ok) {
          // Dated by the event only if it is in the past (ADR 0026); one dated at reception or later is a
          // direct write, stamped under the row lock (ADR 0349): at its date, it would win over every contact
          // write until then, and a later write or clearing `null` would change nothing.
          const dated = Date.parse(event.eventDate) < Date.parse(receivedAt);
          writes.push({ userId: event.userId, patch: result.patch, ...(dated ? { at: event.eventDate } : {}) });
          itemOf.push(i);
          return;
        }
        const errors = Object.fromEntries(Object.entries(result.errors).map(([name, messages]) => [`_user_data.${name}`, messages]));
        outcomes[i] = { status: 'error', _user_id: event.userId, errors };
        accepted[i] = null;
      });
      // A `_user_data` that would grow its contact past 256 KiB fails its event (rule 2, ADR 0346).
      const { refused } = await this.contacts.upsert(tx, projectId, dataSourceId, writes);
      for (const { index, bytes } of refused) {
        outcomes[itemOf[index]] = { status: 'error', _user_id: writes[index].userId, errors: { _user_data: [stateTooLargeMessage(bytes)] } };
        accepted[itemOf[index]] = null;
      }
    });
    this.relay.nudge();
  }

  /** The events to `meld.events.v1`, resolved once Kafka acked them. */
  private produce(command: WriteCommand, events: ParsedEvent[]): Promise<void> {
    return timed('produce', () => this.producer.publish(Outputs.events, events.map((e) => eventMessage(command, e))));
  }
}

function eventMessage({ projectId, dataSourceId, receivedAt }: WriteCommand, e: ParsedEvent): EventAccepted {
  return {
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
}

function stripUserId(data: Record<string, unknown>): EventAccepted['userData'] {
  const { _user_id: _, ...rest } = data;
  return rest as EventAccepted['userData'];
}

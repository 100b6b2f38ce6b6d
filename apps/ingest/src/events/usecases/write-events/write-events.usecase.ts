import { type AutomationTrigger, type EventAccepted, automationTrigger, eventAccepted, keys, Topics } from '@meld/contracts';
import { Injectable } from '@nestjs/common';
import { ContactPatches } from '../../../contacts/contact-patches';
import { type ContactWrite, SourceContactsRepository } from '../../../contacts/source-contacts.repository';
import { IngestProducer } from '../../../outbox/ingest-producer';
import { OutboxRelay } from '../../../outbox/outbox-relay';
import { StreamScope } from '../../../stream/stream-scope';
import { echoUserId, type ItemOutcome, parseBatch, writeOutcome } from '../../../write/write-batch';
import type { WriteCommand } from '../../../write/write.command';
import { type ParsedEvent, insideAutomationWindow, parseEvent } from '../../event-item';
import { EventsRepository } from '../../events.repository';

const USER_DATA_SKIP = new Set(['_user_id']);

/**
 * `POST /stream/events`, every rule of the ingest spec in order:
 * 1. each item is checked (required fields, a declared event type, parameters, date);
 * 2. `_user_data` is upserted first through the contact path (its values dated by the
 *    event, so an older event does not overwrite newer values); if that fails the event
 *    item fails (rule 2);
 * 3. an event-only item for a contact that does not live in this data source is skipped
 *    silently: success, nothing produced, its id not marked (rule 1);
 * 4. dedup: one transaction marks the new ids, produces them to `meld.events.v1` (and the
 *    automation triggers of `automation: true` types within ±1 h, rule 4) and waits for the
 *    acks, then COMMITs; only then the answer. A resent id is a success produced no more.
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
    await this.scope.dataSource(command);
    const items = parseBatch(command.body, 'events');
    const { projectId, dataSourceId, receivedAt } = command;
    const typeNames = [...new Set(items.map((i) => i._event_type).filter((t): t is string => typeof t === 'string'))];
    const types = await this.events.eventTypes(projectId, typeNames);

    const outcomes: ItemOutcome[] = items.map((item) => ({ status: 'success', _user_id: echoUserId(item._user_id) }));
    const accepted: (ParsedEvent | null)[] = items.map((item, i) => {
      const parsed = parseEvent(item, types, receivedAt);
      if (parsed.ok) return parsed.event;
      outcomes[i] = { status: 'error', _user_id: echoUserId(item._user_id), errors: parsed.errors };
      return null;
    });

    // Rule 2: `_user_data` before the event, one transaction for the batch's contacts.
    const withData = accepted.flatMap((e, i) => (e?.userData ? [i] : []));
    if (withData.length > 0) {
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

    // Rule 1: event-only items of contacts that do not exist here are skipped silently.
    const live = await this.contacts.liveUserIds(projectId, dataSourceId, [...new Set(accepted.flatMap((e) => (e ? [e.userId] : [])))]);
    const toProduce = accepted.filter((e): e is ParsedEvent => e !== null && live.has(e.userId));

    if (toProduce.length > 0) {
      await this.events.transaction(async (tx) => {
        const fresh = await this.events.markNew(tx, projectId, toProduce.map((e) => e.eventId));
        const seen = new Set<string>();
        const produce = toProduce.filter((e) => {
          if (!fresh.has(e.eventId) || seen.has(e.eventId)) return false; // a duplicate: success, not produced again
          seen.add(e.eventId);
          return true;
        });
        const key = (e: ParsedEvent) => keys.sourceContact(projectId, dataSourceId, e.userId);
        const messages = produce.map((e) => {
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
          };
          return { key: key(e), value };
        });
        await this.producer.send(Topics.events, messages, { schema: eventAccepted });
        const triggers = produce
          .filter((e) => e.eventType.automation && insideAutomationWindow(e.eventDate, receivedAt))
          .map((e) => {
            const value: AutomationTrigger = {
              schemaVersion: 1,
              projectId,
              audienceId: key(e),
              sourceContactKey: key(e),
              eventId: e.eventId,
              eventType: e.eventType.uid,
              eventDate: e.eventDate,
              receivedAt,
              parameters: e.parameters,
            };
            return { key: key(e), value };
          });
        await this.producer.send(Topics.automationTriggers, triggers, { schema: automationTrigger });
      });
    }
    return writeOutcome(outcomes);
  }
}

function stripUserId(data: Record<string, unknown>): EventAccepted['userData'] {
  const { _user_id: _, ...rest } = data;
  return rest as EventAccepted['userData'];
}

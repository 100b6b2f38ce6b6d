import { Injectable } from '@nestjs/common';
import { isPlainObject, userIdError } from '../../contacts/contact-item';
import { MAX_BATCH_ITEMS } from '../../write/write-batch';
import type { WriteCommand } from '../../write/write.command';
import { eventIdError } from '../event-item';
import { EventsRepository, ResentEventIds } from '../events.repository';
import { CheckFirst } from './check-first.strategy';
import type { DedupWrite } from './dedup-write';
import { MarkFirst } from './mark-first.strategy';

/**
 * Event de-duplication (a resent `_event_id` is a success produced no more): which strategy
 * opens a write (ADR 0227). A batch without `_user_data` marks first (two round trips); one
 * with `_user_data`, or one that turns out to hold an id accepted before, checks first
 * (three).
 */
@Injectable()
export class EventDedupPolicy {
  constructor(private readonly events: EventsRepository) {}

  /** Null when the path cannot name a data source of the project. */
  async open(command: WriteCommand): Promise<DedupWrite | null> {
    const typeUids = eventTypeNames(command.body);
    const marks = markableIds(command.body);
    if (!marks) return new CheckFirst(this.events, { resent: false }).open(command, typeUids);
    try {
      return await new MarkFirst(this.events, marks).open(command, typeUids);
    } catch (err) {
      if (!(err instanceof ResentEventIds)) throw err;
      return new CheckFirst(this.events, { resent: true }).open(command, typeUids);
    }
  }
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

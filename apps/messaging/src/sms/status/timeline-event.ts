import { type EventsMessage, Outputs, smsStatusEventType } from '@meld/contracts';
import { type OutboxRow, outboxRow } from '../../outbox/outbox-row';
import type { StatusEntry } from './status-writer';

export type TimelineEvent = OutboxRow<EventsMessage>;

/**
 * The `meld.events.v1` message that puts a status change on its contact's timeline
 * (ADR 0157), or null for `enqueued`, a message without an audience contact, or a contact with
 * no source contact yet. Events live on source contacts (ClickHouse `events` is keyed by data
 * source and user), so an event goes to the contact's oldest member, which the status writer
 * reads with the locked message row (ADR 0254); the membership that resolves it to the
 * audience contact follows merges. The event id is derived from the message and the status,
 * so a replayed change is the same event.
 */
export function timelineEvent({ row, change, at }: StatusEntry): TimelineEvent | null {
  const eventType = smsStatusEventType(change.status);
  if (!eventType || !row.audience_id || !row.member_data_source_id || !row.member_user_id) return null;
  return outboxRow(Outputs.events, {
    schemaVersion: 1,
    projectId: row.project_id,
    dataSourceId: row.member_data_source_id,
    userId: row.member_user_id,
    eventId: `${eventType}:${row.id}`,
    eventType,
    eventDate: at.toISOString(),
    receivedAt: at.toISOString(),
    parameters: { smsId: row.id, senderId: row.sender_id, messagesCount: row.messages_count, ...(change.error ? { error: change.error } : {}) },
    automation: false,
  });
}

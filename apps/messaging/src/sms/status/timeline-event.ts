import { type EventAccepted, Topics, eventAccepted, keys, smsStatusEventType } from '@meld/contracts';
import type { EntityManager } from 'typeorm';
import type { StatusChange, StatusRow } from './status-writer';

/**
 * The `meld.events.v1` message that puts a status change on the contact's timeline
 * (ADR 0157), or null: `enqueued`, a message without an audience contact, or a contact with
 * no source contact yet. Events live on source contacts (ClickHouse `events` is keyed by
 * data source and user), so the event goes to the contact's oldest member; the membership
 * that resolves it to the audience contact follows merges. The event id is derived from the
 * message and the status, so a replayed change is the same event.
 */
export async function timelineEvent(em: EntityManager, row: StatusRow, change: StatusChange, at: Date): Promise<{ topic: string; key: string; value: EventAccepted } | null> {
  const eventType = smsStatusEventType(change.status);
  if (!eventType || !row.audience_id) return null;
  const [member]: Array<{ dataSourceId: string; userId: string }> = await em.query(
    `SELECT data_source_id AS "dataSourceId", user_id AS "userId" FROM audience_members WHERE project_id = $1 AND audience_id = $2 ORDER BY seq LIMIT 1`,
    [row.project_id, row.audience_id],
  );
  if (!member) return null;
  const value = eventAccepted.parse({
    schemaVersion: 1,
    projectId: row.project_id,
    dataSourceId: member.dataSourceId,
    userId: member.userId,
    eventId: `${eventType}:${row.id}`,
    eventType,
    eventDate: at.toISOString(),
    receivedAt: at.toISOString(),
    parameters: { smsId: row.id, senderId: row.sender_id, messagesCount: row.messages_count, ...(change.error ? { error: change.error } : {}) },
    automation: false,
  });
  return { topic: Topics.events, key: keys.sourceContact(row.project_id, member.dataSourceId, member.userId), value };
}

import { type EventsMessage, Outputs, smsStatusEventType } from '@meld/contracts';
import type { EntityManager } from 'typeorm';
import { type OutboxRow, outboxRow } from '../../outbox/outbox-row';
import type { StatusEntry } from './status-writer';

export type TimelineEvent = OutboxRow<EventsMessage>;

/**
 * The `meld.events.v1` messages that put status changes on their contacts' timelines
 * (ADR 0157), one per entry, in the entries' order, or null for `enqueued`, a message without
 * an audience contact, or a contact with no source contact yet. Events live on source
 * contacts (ClickHouse `events` is keyed by data source and user), so an event goes to the
 * contact's oldest member; the membership that resolves it to the audience contact follows
 * merges. The event id is derived from the message and the status, so a replayed change is
 * the same event. One query finds the members of all the entries' contacts (ADR 0202).
 */
export async function timelineEvents(em: EntityManager, entries: readonly StatusEntry[]): Promise<Array<TimelineEvent | null>> {
  const wanted = entries.filter(({ row, change }) => row.audience_id && smsStatusEventType(change.status));
  if (!wanted.length) return entries.map(() => null);
  const members: Array<{ projectId: string; audienceId: string; dataSourceId: string; userId: string }> = await em.query(
    `SELECT DISTINCT ON (m.project_id, m.audience_id) m.project_id AS "projectId", m.audience_id AS "audienceId", m.data_source_id AS "dataSourceId", m.user_id AS "userId"
       FROM audience_members m JOIN unnest($1::uuid[], $2::uuid[]) AS w(project_id, audience_id) ON m.project_id = w.project_id AND m.audience_id = w.audience_id
      ORDER BY m.project_id, m.audience_id, m.seq`,
    [wanted.map((e) => e.row.project_id), wanted.map((e) => e.row.audience_id)],
  );
  const memberOf = new Map(members.map((m) => [`${m.projectId}/${m.audienceId}`, m]));
  return entries.map(({ row, change, at }) => {
    const eventType = smsStatusEventType(change.status);
    const member = row.audience_id ? memberOf.get(`${row.project_id}/${row.audience_id}`) : undefined;
    if (!eventType || !member) return null;
    return outboxRow(Outputs.events, {
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
  });
}

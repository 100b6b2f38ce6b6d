import { keys, type EventAccepted } from '../../libs/contracts/src';
import type { OutgoingMessage } from '../../libs/kafka/src';

/** What identifies one generated event: enough to rebuild it identically in every variant. */
export interface EventSpec {
  projectId: string;
  dataSourceId: string;
  /** Event number in the run: names the event and picks its user. */
  n: number;
  users: number;
  /** Makes event ids unique across runs. */
  tag: string;
  /** ISO time, second precision is enough (ClickHouse stores seconds). */
  at: string;
}

/** One `meld.events.v1` value as ingest publishes it (a page view with one parameter). */
export function benchEvent(s: EventSpec): EventAccepted {
  return {
    schemaVersion: 1,
    projectId: s.projectId,
    dataSourceId: s.dataSourceId,
    userId: `user-${s.n % s.users}`,
    eventId: `${s.tag}-${s.n}`,
    eventType: 'page_view',
    eventDate: s.at,
    receivedAt: s.at,
    parameters: { url: '/bench' },
  };
}

/** The Kafka message ingest would produce for the event (keyed by source contact). */
export function benchEventMessage(e: EventAccepted): OutgoingMessage {
  return { key: keys.sourceContact(e.projectId, e.dataSourceId, e.userId), value: e };
}

import { randomUUID } from 'node:crypto';
import { type EventsMessage, Outputs, memberLink, suppressionAttribute, userIdMerges } from '@meld/contracts';
import { MESSAGING_CONNECTOR } from '../entities/data-source.entity';
import { outboxTrace } from '../outbox/outbox-trace';
import { type SqlRunner, upsertSourceContacts } from './source-contacts';

/** The project's own data source of the messaging app (ADR 0181), created on first use; ingest refuses writes to its connector. */
export const MESSAGING_SOURCE = { uid: 'meld-messaging', name: 'Meld messaging', connector: MESSAGING_CONNECTOR } as const;

/** A source contact of a data source. */
export interface SourceRef {
  dataSourceId: string;
  userId: string;
}

export type SuppressionReason = 'invalid_destination' | 'manual';
export type SuppressionCreatedBy = 'automatic' | 'admin';

export interface SmsSuppression {
  phone: string;
  reason: SuppressionReason;
  detail: string | null;
  createdAt: Date;
  createdBy: SuppressionCreatedBy;
}

const COLUMNS = `phone, reason, detail, created_at AS "createdAt", created_by AS "createdBy"`;
const SUPPRESSED = suppressionAttribute('sms');

/** The id of the project's messaging data source, created on first use. */
export async function messagingDataSourceId(db: SqlRunner, projectId: string): Promise<string> {
  await db.query(
    `INSERT INTO data_sources (project_id, uid, name, connector) VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, uid) DO NOTHING`,
    [projectId, MESSAGING_SOURCE.uid, MESSAGING_SOURCE.name, MESSAGING_SOURCE.connector],
  );
  const [row] = await db.query(`SELECT id FROM data_sources WHERE project_id = $1 AND uid = $2`, [projectId, MESSAGING_SOURCE.uid]);
  return row.id;
}

interface Member {
  audience_id: string;
  data_source_id: string;
  user_id: string;
}

/**
 * The messaging source contact standing for each audience contact, from its members: ours if one
 * merged already, else one with the oldest member's `_user_id` that merges (a merge key, ADR
 * 0024), else, when every member's is junk, one linked to the oldest member (ADR 0362).
 */
function standingFor(dataSourceId: string, members: readonly Member[]): Map<string, SourceRef> {
  const chosen = new Map<string, Member>();
  const rank = (m: Member) => (m.data_source_id === dataSourceId ? 2 : userIdMerges(m.user_id) ? 1 : 0);
  for (const m of members) {
    const best = chosen.get(m.audience_id);
    if (!best || rank(m) > rank(best)) chosen.set(m.audience_id, m);
  }
  return new Map(
    [...chosen].map(([id, m]) => [id, { dataSourceId, userId: rank(m) > 0 ? m.user_id : memberLink({ dataSourceId: m.data_source_id, userId: m.user_id }) }]),
  );
}

/**
 * The messaging source contact standing for an audience contact: ours if merged into it
 * already, else one with a member's `_user_id` (a merge key, so it joins that contact whatever
 * the project merges on); when every member's `_user_id` is junk, which merges nobody, one
 * linked to the oldest member (`@member:<ref>`, ADR 0362); null without members.
 */
export async function messagingSourceOf(db: SqlRunner, projectId: string, audienceId: string, dataSourceId?: string): Promise<SourceRef | null> {
  const own = dataSourceId ?? (await messagingDataSourceId(db, projectId));
  const members: Member[] = await db.query(
    `SELECT m.audience_id, m.data_source_id, m.user_id FROM audience_members m
      WHERE m.project_id = $1 AND m.audience_id = COALESCE((SELECT survivor_id FROM audience_aliases WHERE project_id = $1 AND absorbed_id = $2), $2)
      ORDER BY m.seq`,
    [projectId, audienceId],
  );
  return standingFor(own, members).values().next().value ?? null;
}

/**
 * The messaging source contacts standing for a number (ADR 0361): that of the message's
 * audience contact when there is one (`audienceId`), else those of every audience contact whose
 * mobile is the number (merge key or merged attribute, as the send path finds them); none: our
 * own contact of the number (`_user_id` the number, which merges by phone) when an outbound
 * auto-creation (ADR 0184) or an inbound message (ADR 0343) wrote one or an audience contact
 * holds the number without members yet, else nobody: no contact is created for a number nobody
 * holds (an imported do-not-contact list must not add contacts to the audience, nor bring back an
 * erased one); the list alone refuses its sends.
 */
async function sourcesOfNumber(db: SqlRunner, projectId: string, dataSourceId: string, phone: string, audienceId: string | null): Promise<SourceRef[]> {
  const ofMessage = audienceId === null ? null : await messagingSourceOf(db, projectId, audienceId, dataSourceId);
  if (ofMessage) return [ofMessage];
  const members: Member[] = await db.query(
    `WITH ids AS (
       SELECT m.audience_id AS id FROM merge_keys k
         JOIN audience_members m ON m.project_id = k.project_id AND m.data_source_id = k.data_source_id AND m.user_id = k.user_id
        WHERE k.project_id = $1 AND k.attribute = '_phone_mobile' AND k.value = $2
       UNION SELECT c.id FROM audience_contacts c WHERE c.project_id = $1 AND c.attributes->>'_phone_mobile' = $2
       LIMIT 100)
     SELECT m.audience_id, m.data_source_id, m.user_id FROM audience_members m JOIN ids ON ids.id = m.audience_id
      WHERE m.project_id = $1 ORDER BY m.audience_id, m.seq`,
    [projectId, phone],
  );
  if (members.length) return [...standingFor(dataSourceId, members).values()];
  const [held] = await db.query(
    `SELECT EXISTS (SELECT 1 FROM source_contacts WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3 AND deleted_at IS NULL AND version > 0)
         OR EXISTS (SELECT 1 FROM audience_contacts WHERE project_id = $1 AND attributes->>'_phone_mobile' = $3) AS held`,
    [projectId, dataSourceId, phone],
  );
  return held.held ? [{ dataSourceId, userId: phone }] : [];
}

/** A `_sms_suppressed` / `_sms_unsuppressed` event on each source contact's timeline (`meld.events.v1`). */
async function timelineEvents(db: SqlRunner, projectId: string, sources: readonly SourceRef[], eventType: '_sms_suppressed' | '_sms_unsuppressed', parameters: Record<string, string>): Promise<void> {
  const at = new Date().toISOString();
  const rows = sources.map((s) => {
    const message: EventsMessage = Outputs.events.schema.parse({
      schemaVersion: 1, projectId, dataSourceId: s.dataSourceId, userId: s.userId, eventId: randomUUID(), eventType, eventDate: at, receivedAt: at, parameters,
    });
    return { topic: Outputs.events.topic, key: Outputs.events.key(message), value: message };
  });
  await db.query(
    `INSERT INTO outbox (topic, key, value, trace)
     SELECT m.e->>'topic', m.e->>'key', m.e->'value', $2::jsonb FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS m(e, n) ORDER BY m.n`,
    [JSON.stringify(rows), outboxTrace()],
  );
}

/**
 * Suppresses a number (ADR 0361), in the caller's transaction: the row, and `_suppressed_sms:
 * true` on the messaging source contacts standing for it (written again when the row existed,
 * so a contact created since gets it too), through the contacts outbox. A new suppression puts
 * `_sms_suppressed` on their timelines. Answers the row, and whether it is new.
 */
export async function suppressSms(
  db: SqlRunner,
  projectId: string,
  entry: { phone: string; reason: SuppressionReason; detail: string | null; createdBy: SuppressionCreatedBy; audienceId?: string | null },
): Promise<{ suppression: SmsSuppression; created: boolean }> {
  // The row is kept from a concurrent lift until this transaction ends (its INSERT, or FOR KEY SHARE on
  // one that existed), so the copy written below cannot outlive it; one lifted after the INSERT saw it
  // and before it was locked is gone: inserted again.
  let inserted: SmsSuppression[] = [];
  let suppression: SmsSuppression | undefined;
  while (!suppression) {
    inserted = await db.query(
      `INSERT INTO sms_suppressions (project_id, phone, reason, detail, created_by) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (project_id, phone) DO NOTHING RETURNING ${COLUMNS}`,
      [projectId, entry.phone, entry.reason, entry.detail, entry.createdBy],
    );
    [suppression] = inserted.length ? inserted : await db.query(`SELECT ${COLUMNS} FROM sms_suppressions WHERE project_id = $1 AND phone = $2 FOR KEY SHARE`, [projectId, entry.phone]);
  }
  const dataSourceId = await messagingDataSourceId(db, projectId);
  const sources = await sourcesOfNumber(db, projectId, dataSourceId, entry.phone, entry.audienceId ?? null);
  await upsertSourceContacts(
    db,
    projectId,
    dataSourceId,
    sources.map((s) => ({ userId: s.userId, patch: s.userId === entry.phone ? { _phone_mobile: entry.phone, [SUPPRESSED]: true } : { [SUPPRESSED]: true } })),
  );
  if (inserted.length && sources.length) await timelineEvents(db, projectId, sources, '_sms_suppressed', { reason: suppression.reason, ...(suppression.detail ? { detail: suppression.detail } : {}) });
  return { suppression, created: inserted.length > 0 };
}

/**
 * Lifts a number's suppression (ADR 0361), in the caller's transaction: deletes the row and
 * clears `_suppressed_sms` (null) on the messaging source contacts that hold it for the number,
 * with `_sms_unsuppressed` on their timelines. Null when the number was not suppressed.
 */
export async function liftSmsSuppression(db: SqlRunner, projectId: string, phone: string): Promise<SmsSuppression | null> {
  // In a WITH: TypeORM answers a bare DELETE as [rows, count], a SELECT as its rows, as a raw client does.
  const [lifted]: SmsSuppression[] = await db.query(`WITH d AS (DELETE FROM sms_suppressions WHERE project_id = $1 AND phone = $2 RETURNING *) SELECT ${COLUMNS} FROM d`, [projectId, phone]);
  if (!lifted) return null;
  const dataSourceId = await messagingDataSourceId(db, projectId);
  const candidates = [...new Set([phone, ...(await sourcesOfNumber(db, projectId, dataSourceId, phone, null)).map((s) => s.userId)])];
  const held: Array<{ user_id: string }> = await db.query(
    `SELECT user_id FROM source_contacts WHERE project_id = $1 AND data_source_id = $2 AND user_id = ANY($3::text[]) AND deleted_at IS NULL AND version > 0 AND attributes->($4::text) = 'true'::jsonb`,
    [projectId, dataSourceId, candidates, SUPPRESSED],
  );
  const sources = held.map((r) => ({ dataSourceId, userId: r.user_id }));
  await upsertSourceContacts(db, projectId, dataSourceId, sources.map((s) => ({ userId: s.userId, patch: { [SUPPRESSED]: null } })));
  if (sources.length) await timelineEvents(db, projectId, sources, '_sms_unsuppressed', { reason: lifted.reason });
  return lifted;
}

/** The project's suppressions in phone order, after `afterPhone` (a page's cursor), or the one of `phone`. */
export function listSmsSuppressions(db: SqlRunner, projectId: string, filter: { phone?: string; afterPhone?: string; limit: number }): Promise<SmsSuppression[]> {
  return db.query(
    `SELECT ${COLUMNS} FROM sms_suppressions
      WHERE project_id = $1 AND ($2::text IS NULL OR phone = $2) AND ($3::text IS NULL OR phone > $3)
      ORDER BY phone LIMIT $4`,
    [projectId, filter.phone ?? null, filter.afterPhone ?? null, filter.limit],
  );
}

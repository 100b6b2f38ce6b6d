import { type ContactChange, dict, Outputs } from '@meld/contracts';
import { outboxTrace } from '../outbox/outbox-trace';
import { contactWriteTime } from './contact-write-time';

type Scalar = string | number | boolean;

/** What a write needs of its connection: a TypeORM EntityManager, or a raw client answering rows (the messaging status writer's). */
export interface SqlRunner {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query(sql: string, params?: unknown[]): Promise<any>;
}
export type SourceAttributeValue = Scalar | Scalar[];
export type SourceAttributePatch = Record<string, SourceAttributeValue | null>;

/**
 * The most a data-source contact's attributes may take, as the UTF-8 bytes of their JSON: 256 KiB
 * (ADR 0346). Each write is one `meld.contacts.v1` message carrying the whole state, and Kafka
 * takes at most ~1 MiB per record batch: a message within this cap always fits, with room for
 * the names a write clears (sent as null) and the envelope. Ingest refuses a write past it.
 */
export const CONTACT_STATE_MAX_BYTES = 256 * 1024;

export interface UpsertOptions {
  /**
   * Refuse a write that would leave its contact's attributes larger than this (stateBytes) and
   * larger than before: nothing of it is applied, and its index is in `refused`. A write that
   * does not grow the contact (clearing, shorter values) always applies, so a contact over the
   * cap can be brought back under it. Unset: no cap (the messaging app's consent writes, a few
   * bytes each, must never be refused).
   */
  maxStateBytes?: number;
}

export interface UpsertResult {
  /** Writes refused by `maxStateBytes`, by index into `writes`, with the size they would have made. */
  refused: Array<{ index: number; bytes: number }>;
}

/**
 * One contact write: a patch, and the time its values are from when that is not now.
 * Without `at`, a direct write: stamped with its contact's write time (contactWriteTime, read
 * under the row lock), it wins over everything stored, so writes to a contact apply in the
 * order they reached its lock whatever the clocks of the processes that took them (ADR 0349).
 * With `at` (ISO, `toISOString`'s form), a dated write, an event's `_user_data` (ADR 0026): an
 * attribute stored with a later time keeps its value; it is stamped at `at`, or at the write
 * time if that is earlier (a date ahead of Postgres' clock must not hold off later writes).
 */
export interface ContactWrite {
  userId: string;
  patch: SourceAttributePatch;
  at?: string;
}

interface Row {
  user_id: string;
  attributes: Record<string, SourceAttributeValue>;
  attribute_at: Record<string, string>;
  version: string;
  deleted_at: Date | null;
  /** Postgres' clock once the row was locked, ms since the epoch. */
  clock_ms: number;
}

/*
 * The one write path of data-source contacts into `source_contacts` and the `outbox` of
 * `meld.contacts.v1`: ingest's writes and the messaging app's own data source (consent from
 * unsubscribe links and keywords, contacts auto-created on outbound; ADR 0181) both go
 * through it, so identity-merge sees them alike.
 */

/**
 * Applies the writes in order (patch semantics: omitted keeps, null clears; a dated value older
 * than the one stored for that attribute is ignored), bumps the version of every contact
 * that changed and queues one `meld.contacts.v1` message per changed contact, its `at` the
 * contact's write time (ADR 0349). The message carries the contact's whole state (cleared
 * names as null), so a consumer that sees only the newest version still ends right. With
 * `maxStateBytes`, a write that would grow its contact past it is refused whole (ADR 0346).
 */
export async function upsertSourceContacts(
  tx: SqlRunner,
  projectId: string,
  dataSourceId: string,
  writes: readonly ContactWrite[],
  options: UpsertOptions = {},
): Promise<UpsertResult> {
  const refused: UpsertResult['refused'] = [];
  if (writes.length === 0) return { refused };
  const ids = [...new Set(writes.map((w) => w.userId))].sort();
  // Rows for new contacts first (version 0, only ever visible inside this transaction), so
  // the lock below covers every key and two batches creating one contact serialise.
  await tx.query(
    `INSERT INTO source_contacts (project_id, data_source_id, user_id)
     SELECT $1, $2, u FROM unnest($3::text[]) AS u ORDER BY u
     ON CONFLICT DO NOTHING`,
    [projectId, dataSourceId, ids],
  );
  // The clock is read in the statement that locks, on each row once it is locked (a subquery
  // with FOR UPDATE is never merged into its outer query, whose projection runs on what the
  // lock returned): each contact's write time follows every write it waited for (ADR 0349).
  const rows: Row[] = await tx.query(
    `SELECT l.*, floor(extract(epoch FROM clock_timestamp()) * 1000)::float8 AS clock_ms FROM (
       SELECT user_id, attributes, attribute_at, version, deleted_at FROM source_contacts
       WHERE project_id = $1 AND data_source_id = $2 AND user_id = ANY($3::text[]) ORDER BY user_id FOR UPDATE) AS l`,
    [projectId, dataSourceId, ids],
  );
  const state = new Map(
    rows.map((r) => {
      const live = r.deleted_at === null && Number(r.version) > 0;
      return [
        r.user_id,
        {
          /** This transaction's time of the contact: direct writes' stamp, the latest a dated one can take. */
          at: contactWriteTime(r.clock_ms, r),
          attributes: dict(live ? r.attributes : undefined),
          attributeAt: dict(live ? r.attribute_at : undefined),
          version: Number(r.version),
          live,
          /** A write of it was applied (under a cap, all of them may be refused). */
          applied: false,
          /** A new version: a value changed, or the contact is (re)created. */
          changed: false,
          cleared: new Set<string>(),
          /** stateBytes(attributes), kept up to date only under a cap. */
          bytes: options.maxStateBytes === undefined ? 0 : stateBytes(live ? r.attributes : {}),
        },
      ];
    }),
  );
  writes.forEach((write, index) => {
    const s = state.get(write.userId)!;
    // A direct write takes the write time, later than anything stored: it is never ignored.
    const at = write.at === undefined || write.at > s.at ? s.at : write.at;
    // What the write changes, decided before anything is applied: under a cap it applies whole or not at all.
    const sets: Array<[string, SourceAttributeValue | null]> = [];
    for (const [name, value] of Object.entries(write.patch)) {
      const storedAt = s.attributeAt[name];
      if (storedAt !== undefined && storedAt > at) continue; // a newer write set it
      sets.push([name, value]);
    }
    if (options.maxStateBytes !== undefined) {
      let bytes = s.bytes;
      for (const [name, value] of sets) bytes += entryBytes(name, value) - entryBytes(name, Object.hasOwn(s.attributes, name) ? s.attributes[name] : null);
      if (bytes > options.maxStateBytes && bytes > s.bytes) {
        refused.push({ index, bytes });
        return;
      }
      s.bytes = bytes;
    }
    s.applied = true;
    if (!s.live) s.changed = true;
    for (const [name, value] of sets) {
      s.attributeAt[name] = at;
      if (value === null) {
        if (Object.hasOwn(s.attributes, name)) {
          delete s.attributes[name];
          s.cleared.add(name);
          s.changed = true;
        }
      } else if (JSON.stringify(s.attributes[name]) !== JSON.stringify(value)) {
        s.attributes[name] = value;
        s.cleared.delete(name);
        s.changed = true;
      }
    }
  });
  const changed = [...state.entries()].filter(([, s]) => s.changed);
  // A contact every write of which was refused stays as it was; one that did not exist is not created.
  const untouched = [...state.entries()].filter(([, s]) => !s.applied && s.version === 0).map(([userId]) => userId);
  if (untouched.length) {
    await tx.query(`DELETE FROM source_contacts WHERE project_id = $1 AND data_source_id = $2 AND user_id = ANY($3::text[]) AND version = 0`, [projectId, dataSourceId, untouched]);
  }
  // attribute_at may move without a value change (same value rewritten later): keep it.
  const updates = [...state.entries()].filter(([, s]) => s.applied).map(([userId, s]) => ({
    user_id: userId,
    attributes: s.attributes,
    attribute_at: s.attributeAt,
    version: s.changed ? s.version + 1 : s.version,
  }));
  if (updates.length) await tx.query(
    `UPDATE source_contacts AS s
     SET attributes = v.attributes, attribute_at = v.attribute_at, version = v.version, deleted_at = NULL, updated_at = now()
     FROM jsonb_to_recordset($3::jsonb) AS v(user_id text, attributes jsonb, attribute_at jsonb, version bigint)
     WHERE s.project_id = $1 AND s.data_source_id = $2 AND s.user_id = v.user_id`,
    [projectId, dataSourceId, JSON.stringify(updates)],
  );
  const messages = changed.map(([userId, s]): ContactChange => {
    const patch: SourceAttributePatch = dict(s.attributes);
    for (const name of s.cleared) patch[name] = null;
    return { schemaVersion: 1, kind: 'upsert', projectId, dataSourceId, userId, version: s.version + 1, at: s.at, patch };
  });
  await enqueueContactChanges(tx, messages);
  return { refused };
}

/**
 * The UTF-8 bytes of a contact's attributes as JSON (`{"name":value,…}`), the measure of
 * CONTACT_STATE_MAX_BYTES: what the contact's `meld.contacts.v1` message carries.
 */
export function stateBytes(attributes: Readonly<Record<string, SourceAttributeValue>>): number {
  let n = 1; // `{`, and `}` in place of the last comma (or both, empty)
  for (const [name, value] of Object.entries(attributes)) n += entryBytes(name, value);
  return Math.max(n, 2);
}

/** `"name":value,` in UTF-8; 0 for an absent (null) value. */
function entryBytes(name: string, value: SourceAttributeValue | null | undefined): number {
  if (value === null || value === undefined) return 0;
  return Buffer.byteLength(JSON.stringify(name)) + Buffer.byteLength(JSON.stringify(value)) + 2;
}

/** Queues `meld.contacts.v1` messages in the writer's transaction, in order. */
export async function enqueueContactChanges(tx: SqlRunner, messages: readonly ContactChange[]): Promise<void> {
  if (messages.length === 0) return;
  const { topic, schema, key } = Outputs.contacts;
  for (const m of messages) schema.parse(m); // a bad message must fail the write, not the relay
  // One JSON parameter rather than a jsonb[]: pg escapes every quote of every element of an
  // array parameter in JavaScript, JSON.stringify of the whole is native (identity-merge's
  // profile had that escaping among its top costs).
  await tx.query(
    `INSERT INTO outbox (topic, key, value, trace)
     SELECT $1, m.e->>'key', m.e->'value', $3::jsonb FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS m(e, n) ORDER BY m.n`,
    [topic, JSON.stringify(messages.map((m) => ({ key: key(m), value: m }))), outboxTrace()],
  );
}

import { type ContactChange, dict, Outputs } from '@meld/contracts';
import type { EntityManager } from 'typeorm';
import { outboxTrace } from '../outbox/outbox-trace';

type Scalar = string | number | boolean;
export type SourceAttributeValue = Scalar | Scalar[];
export type SourceAttributePatch = Record<string, SourceAttributeValue | null>;

/** One contact write: a patch and the time its values are from (reception, or an event's date). */
export interface ContactWrite {
  userId: string;
  patch: SourceAttributePatch;
  at: string;
}

interface Row {
  user_id: string;
  attributes: Record<string, SourceAttributeValue>;
  attribute_at: Record<string, string>;
  version: string;
  deleted_at: Date | null;
}

/*
 * The one write path of data-source contacts into `source_contacts` and the `outbox` of
 * `meld.contacts.v1`: ingest's writes and the messaging app's own data source (consent from
 * unsubscribe links and keywords, contacts auto-created on outbound; ADR 0181) both go
 * through it, so identity-merge sees them alike.
 */

/**
 * Applies the writes in order (patch semantics: omitted keeps, null clears; a value older
 * than the one stored for that attribute is ignored), bumps the version of every contact
 * that changed and queues one `meld.contacts.v1` message per changed contact. The message
 * carries the contact's whole state (cleared names as null), so a consumer that sees
 * only the newest version still ends right.
 */
export async function upsertSourceContacts(tx: EntityManager, projectId: string, dataSourceId: string, writes: readonly ContactWrite[], writtenAt: string): Promise<void> {
  if (writes.length === 0) return;
  const ids = [...new Set(writes.map((w) => w.userId))].sort();
  // Rows for new contacts first (version 0, only ever visible inside this transaction), so
  // the lock below covers every key and two batches creating one contact serialise.
  await tx.query(
    `INSERT INTO source_contacts (project_id, data_source_id, user_id)
     SELECT $1, $2, u FROM unnest($3::text[]) AS u ORDER BY u
     ON CONFLICT DO NOTHING`,
    [projectId, dataSourceId, ids],
  );
  const rows: Row[] = await tx.query(
    `SELECT user_id, attributes, attribute_at, version, deleted_at FROM source_contacts
     WHERE project_id = $1 AND data_source_id = $2 AND user_id = ANY($3::text[]) ORDER BY user_id FOR UPDATE`,
    [projectId, dataSourceId, ids],
  );
  const state = new Map(
    rows.map((r) => {
      const live = r.deleted_at === null && Number(r.version) > 0;
      return [
        r.user_id,
        {
          attributes: dict(live ? r.attributes : undefined),
          attributeAt: dict(live ? r.attribute_at : undefined),
          version: Number(r.version),
          changed: !live,
          cleared: new Set<string>(),
        },
      ];
    }),
  );
  for (const write of writes) {
    const s = state.get(write.userId)!;
    for (const [name, value] of Object.entries(write.patch)) {
      const storedAt = s.attributeAt[name];
      if (storedAt !== undefined && storedAt > write.at) continue; // a newer write set it
      s.attributeAt[name] = write.at;
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
  }
  const changed = [...state.entries()].filter(([, s]) => s.changed);
  // attribute_at may move without a value change (same value rewritten later): keep it.
  const updates = [...state.entries()].map(([userId, s]) => ({
    user_id: userId,
    attributes: s.attributes,
    attribute_at: s.attributeAt,
    version: s.changed ? s.version + 1 : s.version,
  }));
  await tx.query(
    `UPDATE source_contacts AS s
     SET attributes = v.attributes, attribute_at = v.attribute_at, version = v.version, deleted_at = NULL, updated_at = now()
     FROM jsonb_to_recordset($3::jsonb) AS v(user_id text, attributes jsonb, attribute_at jsonb, version bigint)
     WHERE s.project_id = $1 AND s.data_source_id = $2 AND s.user_id = v.user_id`,
    [projectId, dataSourceId, JSON.stringify(updates)],
  );
  const messages = changed.map(([userId, s]): ContactChange => {
    const patch: SourceAttributePatch = dict(s.attributes);
    for (const name of s.cleared) patch[name] = null;
    return { schemaVersion: 1, kind: 'upsert', projectId, dataSourceId, userId, version: s.version + 1, at: writtenAt, patch };
  });
  await enqueueContactChanges(tx, messages);
}

/** Queues `meld.contacts.v1` messages in the writer's transaction, in order. */
export async function enqueueContactChanges(tx: EntityManager, messages: readonly ContactChange[]): Promise<void> {
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

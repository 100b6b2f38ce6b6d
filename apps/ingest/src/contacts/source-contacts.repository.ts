import { dict, contactChange, eventsErased, keys, Topics, type ContactChange, type EventsErased } from '@meld/contracts';
import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { AttributeRule, AttributeValue } from './attribute-rules';
import type { AttributePatch, NewAttribute } from './contact-item';

/** One contact write: a patch and the time its values are from (reception, or an event's date). */
export interface ContactWrite {
  userId: string;
  patch: AttributePatch;
  at: string;
}

interface Row {
  user_id: string;
  attributes: Record<string, AttributeValue>;
  attribute_at: Record<string, string>;
  version: string;
  deleted_at: Date | null;
}

/**
 * All I/O of data-source contacts: the catalogue rules ingest checks against, the upsert
 * with its outbox rows (one transaction), the delete. Every method takes the project id.
 */
@Injectable()
export class SourceContactsRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.ds.transaction(work);
  }

  async catalogue(projectId: string, tx: EntityManager | DataSource = this.ds): Promise<Map<string, AttributeRule>> {
    const rows: AttributeRule[] = await tx.query(
      `SELECT uid, type, multivalue, enabled, internal, reserved FROM attributes WHERE project_id = $1`,
      [projectId],
    );
    return new Map(rows.map((r) => [r.uid, r]));
  }

  /** Creates custom attributes (first writer wins on a race) and returns the rules that now stand. */
  async createAttributes(tx: EntityManager, projectId: string, created: NewAttribute[]): Promise<Map<string, AttributeRule>> {
    if (created.length === 0) return new Map();
    await tx.query(
      `INSERT INTO attributes (project_id, uid, label, type, multivalue)
       SELECT $1, a.uid, a.uid, a.type, a.multivalue FROM jsonb_to_recordset($2::jsonb) AS a(uid text, type text, multivalue boolean)
       ORDER BY a.uid
       ON CONFLICT (project_id, uid) DO NOTHING`,
      [projectId, JSON.stringify(created)],
    );
    const rows: AttributeRule[] = await tx.query(
      `SELECT uid, type, multivalue, enabled, internal, reserved FROM attributes WHERE project_id = $1 AND uid = ANY($2::text[])`,
      [projectId, created.map((c) => c.uid)],
    );
    return new Map(rows.map((r) => [r.uid, r]));
  }

  /**
   * Applies the writes in order (patch semantics: omitted keeps, null clears; a value older
   * than the one stored for that attribute is ignored), bumps the version of every contact
   * that changed and queues one `meld.contacts.v1` message per changed contact. The message
   * carries the contact's whole state (cleared names as null), so a consumer that sees
   * only the newest version still ends right.
   */
  async upsert(tx: EntityManager, projectId: string, dataSourceId: string, writes: ContactWrite[], writtenAt: string): Promise<void> {
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
      const patch: AttributePatch = dict(s.attributes);
      for (const name of s.cleared) patch[name] = null;
      return { schemaVersion: 1, kind: 'upsert', projectId, dataSourceId, userId, version: s.version + 1, at: writtenAt, patch };
    });
    await this.enqueue(tx, projectId, dataSourceId, messages);
  }

  /**
   * Deletes a live contact for good (ADR 0038): its personal data leaves
   * the row (the key row stays with `deleted_at` and a bumped version, so a later upsert is
   * ordered after the delete) and two messages are queued, in this order: the
   * `meld.contacts.v1` delete (identity-merge recomputes the audience) and the
   * `meld.events.v1` erase marker (the events sink forgets the contact's events). Upserts of
   * it still in the outbox leave Postgres when the relay publishes them (rewriting them here
   * would lock rows the relay's `SKIP LOCKED` pass then passes over, out of order). False
   * when there is no live contact.
   */
  async delete(tx: EntityManager, projectId: string, dataSourceId: string, userId: string, at: string): Promise<boolean> {
    const rows: { version: string }[] = await tx.query(
      // (a CTE, because TypeORM's query() returns [rows, count] for a bare UPDATE … RETURNING)
      `WITH d AS (
         UPDATE source_contacts SET attributes = '{}', attribute_at = '{}', version = version + 1, deleted_at = now(), updated_at = now()
         WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3 AND deleted_at IS NULL AND version > 0
         RETURNING version)
       SELECT version FROM d`,
      [projectId, dataSourceId, userId],
    );
    if (rows.length === 0) return false;
    const version = Number(rows[0].version);
    const key = keys.sourceContact(projectId, dataSourceId, userId);
    await this.enqueue(tx, projectId, dataSourceId, [{ schemaVersion: 1, kind: 'delete', projectId, dataSourceId, userId, version, at }]);
    const erase: EventsErased = eventsErased.parse({ schemaVersion: 1, kind: 'erase', projectId, dataSourceId, userId, version, at });
    await tx.query(`INSERT INTO outbox (topic, key, value) VALUES ($1, $2, $3)`, [Topics.events, key, JSON.stringify(erase)]);
    return true;
  }

  private async enqueue(tx: EntityManager, projectId: string, dataSourceId: string, messages: ContactChange[]): Promise<void> {
    if (messages.length === 0) return;
    for (const m of messages) contactChange.parse(m); // a bad message must fail the write, not the relay
    // One JSON parameter rather than a jsonb[]: pg escapes every quote of every element of an
    // array parameter in JavaScript, JSON.stringify of the whole is native (identity-merge's
    // profile had that escaping among its top costs).
    await tx.query(
      `INSERT INTO outbox (topic, key, value)
       SELECT $1, m.e->>'key', m.e->'value' FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS m(e, n) ORDER BY m.n`,
      [Topics.contacts, JSON.stringify(messages.map((m) => ({ key: keys.sourceContact(projectId, dataSourceId, m.userId), value: m })))],
    );
  }
}

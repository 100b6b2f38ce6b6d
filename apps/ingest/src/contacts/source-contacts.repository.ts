import { keys, Outputs, type EventsErased } from '@meld/contracts';
import type { OutgoingMessage } from '@meld/kafka';
import { CONTACT_STATE_MAX_BYTES, CONTACT_WRITE_TIME_SQL, type ContactWrite, DATA_SOURCE, enqueueContactChanges, OUTBOX_DEAD_LETTERS, type UpsertResult, upsertSourceContacts } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { AttributeRule } from './attribute-rules';
import type { NewAttribute } from './contact-item';

export type { ContactWrite, UpsertResult };

/** What a delete leaves to produce before its COMMIT: the contact's events still in the outbox, then its erase marker. */
export interface DeletedContact {
  queuedEvents: OutgoingMessage[];
  erase: EventsErased;
}

/**
 * The item error of a write refused because its contact would hold more than
 * CONTACT_STATE_MAX_BYTES (ADR 0346): what it would have made, the cap, and the way out.
 */
export function stateTooLargeMessage(bytes: number): string {
  return `the contact would hold ${bytes} bytes of attributes (as JSON), more than the ${CONTACT_STATE_MAX_BYTES} bytes (256 KiB) one contact may hold; nothing of this item was applied: clear attributes (null) or send shorter values`;
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
   * Applies contact writes with their outbox rows (the shared path, `@meld/db` upsertSourceContacts),
   * except those that would grow a contact past CONTACT_STATE_MAX_BYTES (ADR 0346): their
   * indexes come back in `refused`, and the caller reports them as item errors
   * (stateTooLargeMessage). So every message ingest queues fits in what Kafka takes.
   */
  upsert(tx: EntityManager, projectId: string, dataSourceId: string, writes: ContactWrite[]): Promise<UpsertResult> {
    return upsertSourceContacts(tx, projectId, dataSourceId, writes, { maxStateBytes: CONTACT_STATE_MAX_BYTES });
  }

  /**
   * Deletes a live contact for good (ADR 0038): its personal data leaves
   * the row (the key row stays with `deleted_at` and a bumped version, so a later upsert is
   * ordered after the delete) and the `meld.contacts.v1` delete is queued in the outbox
   * (identity-merge recomputes the audience). Returns the `meld.events.v1` erase marker and,
   * taken out of the outbox in id order, the contact's events still queued there (the messaging
   * app queues its own, ADR 0181): the caller produces both, those events first, before the
   * COMMIT, while the row is held (ADR 0039). Queued, the marker could reach the topic after
   * the events of the contact re-created once this commits. Upserts of it still in the outbox
   * leave Postgres when the relay publishes them (rewriting them here would lock rows the
   * relay's `SKIP LOCKED` pass then passes over, out of order). The messages' `at` and
   * `deleted_at` are the contact's write time, read under its row lock, so they follow every
   * write before the delete, and the next upsert's follow them (ADR 0349). Null when there is
   * no live contact.
   */
  async delete(tx: EntityManager, projectId: string, dataSourceId: string, userId: string): Promise<DeletedContact | null> {
    const rows: { version: string; deleted_at: Date }[] = await tx.query(
      // (a CTE, because TypeORM's query() returns [rows, count] for a bare UPDATE … RETURNING;
      // SET reads the row as it was, after the lock: a concurrent write's times included)
      `WITH d AS (
         UPDATE source_contacts SET attributes = '{}', attribute_at = '{}', version = version + 1, deleted_at = ${CONTACT_WRITE_TIME_SQL}, updated_at = now()
         WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3 AND deleted_at IS NULL AND version > 0
         RETURNING version, deleted_at)
       SELECT version, deleted_at FROM d`,
      [projectId, dataSourceId, userId],
    );
    if (rows.length === 0) return null;
    const version = Number(rows[0].version);
    const at = rows[0].deleted_at.toISOString();
    // Its messages an outbox relay set aside (ADR 0346) hold its data too.
    await tx.query(`DELETE FROM ${OUTBOX_DEAD_LETTERS} WHERE key = $1`, [keys.sourceContact(projectId, dataSourceId, userId)]);
    await enqueueContactChanges(tx, [{ schemaVersion: 1, kind: 'delete', projectId, dataSourceId, userId, version, at }]);
    // A pass of the relay holding one of them is waited for (it is then on the topic, and gone).
    const queued: { key: string; value: unknown; trace: Record<string, string> | null }[] = await tx.query(
      `WITH q AS (DELETE FROM outbox WHERE topic = $1 AND key = $2 RETURNING id, key, value, trace) SELECT key, value, trace FROM q ORDER BY id`,
      [Outputs.events.topic, keys.sourceContact(projectId, dataSourceId, userId)],
    );
    return {
      erase: { schemaVersion: 1, kind: 'erase', projectId, dataSourceId, userId, version, at },
      queuedEvents: queued.map((r) => (r.trace ? { key: r.key, value: r.value, headers: r.trace } : { key: r.key, value: r.value })),
    };
  }
}

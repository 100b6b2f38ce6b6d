import { DATA_SOURCE, type OpenTransaction, beginWith, isUuid, rawPool } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import { type PoolClient, escapeLiteral } from 'pg';
import type { DataSource } from 'typeorm';
import type { EventTypeRule } from './event-item';

export interface EventWriteContext {
  /** The path's data source when it is one of the project's, else null. */
  dataSourceId: string | null;
  /** Its connector (null with it): the `meld-messaging` one is not written through ingest (ADR 0181). */
  connector: string | null;
  types: Map<string, EventTypeRule>;
}

export interface MarkedEvents {
  /** Users of the batch with a live contact in the data source, now locked FOR SHARE. */
  live: Set<string>;
  /** Event ids of live users seen for the first time (a resent id is not among them). */
  fresh: Set<string>;
}

/**
 * The data source check (its id and connector) and the batch's event types with their parameters, one statement
 * (they were three): sent with the write's BEGIN (libs/db beginWith: one round trip for both)
 * when the write marks first, alone when it checks first. Its values are literals: two UUIDs
 * checked by the caller and the type names escaped.
 */
const contextSql = (projectId: string, dataSourceId: string, typeUids: string[]) => `
  SELECT d.id AS data_source_id, d.connector,
         (SELECT coalesce(json_agg(json_build_object(
                   'id', t.id, 'uid', t.uid, 'automation', t.automation,
                   'parameters', (SELECT coalesce(json_agg(json_build_object(
                                      'parameter', p.parameter, 'dataType', p.data_type, 'required', p.required,
                                      'multiValue', p.multi_value, 'maxLength', p.max_length)), '[]')
                                  FROM event_parameters p WHERE p.event_type_id = t.id))), '[]')
          FROM event_types t WHERE t.project_id = '${projectId}'::uuid
           AND t.uid = ANY(ARRAY[${typeUids.map(escapeLiteral).join(',')}]::text[])) AS types
  FROM (SELECT 1) AS one LEFT JOIN data_sources d ON d.id = '${dataSourceId}'::uuid AND d.project_id = '${projectId}'::uuid`;

/**
 * Lock the batch's live contacts (FOR SHARE, in user_id order like every other locker of
 * source_contacts) and mark the event ids of live users, in one statement (they were two).
 * `live` is read whole by the final SELECT, so every live contact is locked, not just those
 * whose ids turned out new; ids are inserted in sorted order so two batches sharing ids wait
 * on each other instead of deadlocking.
 *
 * Two forms: most batches carry only new ids, and a plain INSERT costs Postgres ~40% less
 * than ON CONFLICT DO NOTHING's speculative insertion (4.8 vs 7.5 µs per id, measured); a
 * batch with a resent id fails it on the unique key (nothing is written, the transaction
 * rolls back) and goes again with ON CONFLICT, which skips the ids already there.
 *
 * Values are literals (the statement goes with BEGIN, libs/db beginWith), each id through
 * pg's escapeLiteral; ids with U+0000 never get here (their items fail their checks).
 */
interface MarkValues {
  project: string;
  dataSource: string;
  users: string;
  eventIds: string;
  userIds: string;
}

/** The `live` and `fresh` CTEs, with the values as SQL literals (markValues). */
const markCtes = (v: MarkValues, resent: boolean) => `
  live AS MATERIALIZED (
         SELECT user_id FROM source_contacts
         WHERE project_id = ${v.project} AND data_source_id = ${v.dataSource} AND user_id = ANY(${v.users}) AND deleted_at IS NULL AND version > 0
         ORDER BY user_id FOR SHARE),
       fresh AS (
         INSERT INTO event_ids (project_id, event_id)
         SELECT ${v.project}, e.event_id FROM unnest(${v.eventIds}, ${v.userIds}) AS e(event_id, user_id)
         WHERE e.user_id IN (SELECT user_id FROM live)
         ORDER BY e.event_id
         ${resent ? 'ON CONFLICT DO NOTHING ' : ''}RETURNING event_id)`;
const MARKED = 'ARRAY(SELECT user_id FROM live) AS live, ARRAY(SELECT event_id FROM fresh) AS fresh';

const textArray = (values: readonly string[]) => `ARRAY[${values.map(escapeLiteral).join(',')}]::text[]`;

const markValues = (projectId: string, dataSourceId: string, marks: readonly { userId: string; eventId: string }[]): MarkValues => ({
  project: `'${projectId}'::uuid`,
  dataSource: `'${dataSourceId}'::uuid`,
  users: textArray([...new Set(marks.map((m) => m.userId))]),
  eventIds: textArray(marks.map((m) => m.eventId)),
  userIds: textArray(marks.map((m) => m.userId)),
});

/**
 * The context and the lock-and-mark of a batch without `_user_data` in one statement, so the
 * write is two round trips (this with BEGIN, then COMMIT) instead of three: the marks cannot
 * wait for the context when the live users do not depend on the batch (no `_user_data` to
 * create them first). It marks the ids of every item whose ids look valid, before the items
 * are checked against the types; the caller unmarks those of items that then fail.
 */
const openAndMarkSql = (projectId: string, dataSourceId: string, typeUids: string[], marks: readonly { userId: string; eventId: string }[]) => `
  WITH ${markCtes(markValues(projectId, dataSourceId, marks), false)},
       context AS (${contextSql(projectId, dataSourceId, typeUids)})
  SELECT context.data_source_id, context.connector, context.types, ${MARKED} FROM context`;

/** The lock-and-mark of checked items alone, sent with BEGIN (the check-first way). */
const lockAndMarkSql = (projectId: string, dataSourceId: string, marks: readonly { userId: string; eventId: string }[], resent: boolean) => `
  WITH ${markCtes(markValues(projectId, dataSourceId, marks), resent)}
  SELECT ${MARKED}`;

/** The batch holds an id already accepted (or one id twice): write it again with `resent`. */
export class ResentEventIds extends Error {
  constructor() {
    super('the batch holds an event id already accepted');
  }
}

const UNIQUE_VIOLATION = '23505';

interface ContextRow {
  data_source_id: string | null;
  connector: string | null;
  types: EventTypeRule[];
}

interface MarkRow {
  live: string[];
  fresh: string[];
}

/** All I/O of event writes: the data source, the project's event types and the event-id dedup set. */
@Injectable()
export class EventsRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /**
   * Whether the path's data source belongs to the project, and the event types the batch
   * names: one statement on a pooled connection, given back at once (the check-first way:
   * no transaction is open while the write upserts its `_user_data`). Null when the ids are
   * not UUIDs (no data source of the project then).
   */
  async context(projectId: string, dataSourceId: string, typeUids: string[]): Promise<EventWriteContext | null> {
    if (!isUuid(dataSourceId) || !isUuid(projectId)) return null;
    const {
      rows: [row],
    } = await rawPool(this.ds).query<ContextRow>(contextSql(projectId, dataSourceId, typeUids));
    return toContext(row);
  }

  /**
   * BEGIN, `context` and the lock-and-mark in one round trip, for a batch whose users do not
   * depend on it (no `_user_data`): `marks` are the items whose ids look valid, checked or
   * not. Throws ResentEventIds (rolled back, nothing held) when an id was accepted before or
   * comes twice.
   *
   * Its COMMIT, like `openAndLock`'s, does not wait for the WAL flush. The events' durable
   * copy is the topic (acks -1, before COMMIT); the marked ids only stop a client's resend
   * from being produced again. A Postgres crash may forget the last ~0.6 s of marks, and a
   * resend of one of those ids is then on the topic twice, which every reader already absorbs
   * (ClickHouse keeps one row per event id; trigger consumers see redeliveries anyway).
   * Waiting for the flush cost the half-load p99 most: behind ClickHouse's merge writes, one
   * fsync took 100-200 ms.
   */
  async openAndMark(
    projectId: string,
    dataSourceId: string,
    typeUids: string[],
    marks: readonly { userId: string; eventId: string }[],
  ): Promise<{ tx: OpenTransaction<ContextRow & MarkRow>; context: EventWriteContext; marked: MarkedEvents } | null> {
    if (!isUuid(dataSourceId) || !isUuid(projectId)) return null;
    let tx: OpenTransaction<ContextRow & MarkRow>;
    try {
      tx = await beginWith<ContextRow & MarkRow>(this.ds, openAndMarkSql(projectId, dataSourceId, typeUids, marks), { asyncCommit: true });
    } catch (err) {
      if ((err as { code?: string }).code === UNIQUE_VIOLATION) throw new ResentEventIds();
      throw err;
    }
    const [row] = tx.rows;
    return { tx, context: toContext(row), marked: { live: new Set(row.live), fresh: new Set(row.fresh) } };
  }

  /** Takes back marks of this transaction (ids of items that failed their checks after openAndMark). */
  async unmark(tx: PoolClient, projectId: string, eventIds: readonly string[]): Promise<void> {
    if (eventIds.length > 0) await tx.query({ text: 'DELETE FROM event_ids WHERE project_id = $1 AND event_id = ANY($2::text[])', values: [projectId, eventIds] });
  }

  /**
   * BEGIN and the lock-and-mark of checked items in one round trip (the check-first way,
   * after the write's `_user_data` is committed): locks the live contacts among `events`'
   * users and marks their event ids as accepted, both held until the caller's COMMIT (the ids
   * roll back with a failed produce). Throws ResentEventIds (rolled back, nothing held) when
   * not `resent` and an id was accepted before or comes twice.
   */
  async openAndLock(
    projectId: string,
    dataSourceId: string,
    events: readonly { userId: string; eventId: string }[],
    o: { resent: boolean },
  ): Promise<{ tx: OpenTransaction<MarkRow>; marked: MarkedEvents }> {
    try {
      const tx = await beginWith<MarkRow>(this.ds, lockAndMarkSql(projectId, dataSourceId, events, o.resent), { asyncCommit: true });
      const [row] = tx.rows;
      return { tx, marked: { live: new Set(row.live), fresh: new Set(row.fresh) } };
    } catch (err) {
      if (!o.resent && (err as { code?: string }).code === UNIQUE_VIOLATION) throw new ResentEventIds();
      throw err;
    }
  }
}

function toContext(row: ContextRow): EventWriteContext {
  return { dataSourceId: row.data_source_id, connector: row.connector, types: new Map(row.types.map((t) => [t.uid, t])) };
}

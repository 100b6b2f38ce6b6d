import { join, raw, sql, type Sql } from '@meld/clickhouse';
import { latestMembership } from '../audience/membership-sql';

/** An event as a listing reads it (deduplicated by event id); dates in unix seconds. */
export interface EventRow {
  id: string;
  type: string;
  ts: number;
  rts: number;
  keys: string[];
  values: string[];
  ds: string;
  user: string;
}

export interface EventPosition {
  /** unix seconds */
  date: number;
  id: string;
}

export interface EventPageOptions {
  projectId: string;
  eventType?: string;
  dataSourceId?: string;
  /** Event dates listed, unix seconds, [from, to). */
  range: { from: number; to: number };
  /** `asc`: oldest first (a scroll); `desc`: newest first (a search). */
  order: 'asc' | 'desc';
  /** Keyset position: the page starts after it in `order`. */
  after?: EventPosition;
  offset?: number;
  limit: number;
  /** Window width in seconds the previous page ended with; absent: sized from a count. */
  span?: number;
  /** Only the events of source contacts this condition keeps (`eventsOfAudience`: an audience filter, ADR 0332). */
  contacts?: Sql;
}

export interface EventPage {
  rows: EventRow[];
  more: boolean;
  span: number;
}

type Query = <T>(statement: Sql) => Promise<T[]>;

/**
 * One page of a project's events (ADR 0332), read window by window of event dates: the events
 * table is keyed (project, type, date, id), so a date window prunes granules (within each type),
 * where one query over everything after a position would group and sort all of it on ClickHouse
 * 18.16. The first window is sized from a count of the range to hold about twice what the page
 * needs; one holding too few is followed by one twice as wide. Each event is listed once, at its
 * first copy's date in the range (`firstCopiesOnly`). One row beyond the page tells whether more follow.
 */
export async function windowedEventsPage(query: Query, opts: EventPageOptions): Promise<EventPage> {
  const { order, limit } = opts;
  const offset = opts.offset ?? 0;
  const needed = offset + limit + 1;
  let range = opts.range;
  let span: number;
  if (opts.span === undefined) {
    // A first page: the range narrowed to the dates its events have (no windows over an empty future or past), and a width from their count.
    const sized = await sizeRange(query, opts, needed);
    if (!sized) return { rows: [], more: false, span: 1 };
    [range, span] = [sized.range, sized.span];
  } else span = Math.min(Math.max(1, range.to - range.from), Math.max(1, Math.floor(opts.span)));
  const rows: EventRow[] = [];
  const asc = order === 'asc';
  let keyset = opts.after;
  // The edge the next window starts from: its lower bound going up, its upper bound going down.
  let edge = asc ? (keyset?.date ?? range.from) : keyset ? keyset.date + 1 : range.to;
  for (;;) {
    const [from, to] = asc ? [edge, Math.min(range.to, edge + span)] : [Math.max(range.from, edge - span), edge];
    rows.push(...(await query<EventRow>(eventsWindow(opts, { from, to }, keyset, needed - rows.length))));
    const exhausted = asc ? to >= range.to : from <= range.from;
    if (rows.length >= needed || exhausted) break;
    // Never wider than the range: the width goes into the scroll id, which takes seconds a DateTime holds.
    [edge, keyset, span] = [asc ? to : from, undefined, Math.min(span * 2, Math.max(1, range.to - range.from))];
  }
  return { rows: rows.slice(offset, offset + limit), more: rows.length >= needed, span };
}

/** The filters of the listing; `contacts` left out by the reads of an event's copies, which share its source contact. */
function filters(opts: EventPageOptions, withContacts = true): Sql[] {
  return [
    sql`project_id = ${opts.projectId}`,
    ...(opts.eventType === undefined ? [] : [sql`event_type = ${opts.eventType}`]),
    ...(opts.dataSourceId === undefined ? [] : [sql`data_source_id = ${opts.dataSourceId}`]),
    ...(opts.contacts === undefined || !withContacts ? [] : [opts.contacts]),
  ];
}

const seconds = (n: number) => raw(String(Math.floor(n)));

/** How long after its first copy a resend dated at its reception is still listed once (seconds; ADR 0332). */
const RESEND_HORIZON = 7 * 86_400;

function eventsWindow(opts: EventPageOptions, window: { from: number; to: number }, after: EventPosition | undefined, limit: number): Sql {
  const asc = opts.order === 'asc';
  const cmp = raw(asc ? '>' : '<');
  const within = [sql`event_date >= toDateTime(${seconds(window.from)})`, sql`event_date < toDateTime(${seconds(window.to)})`];
  const keyset = after ? [sql`(event_date ${cmp} toDateTime(${seconds(after.date)}) OR (event_date = toDateTime(${seconds(after.date)}) AND event_id ${cmp} ${after.id}))`] : [];
  const where = [...filters(opts), ...within, ...keyset];
  const dir = raw(asc ? 'ASC' : 'DESC');
  return sql`SELECT event_id AS id, any(event_type) AS type, toUInt32(any(event_date)) AS ts, toUInt32(any(received_at)) AS rts,
                    any(param_keys) AS keys, any(param_values) AS values, any(data_source_id) AS ds, any(user_id) AS user
               FROM events WHERE ${join([...where, firstCopiesOnly(opts, window, [...within, ...keyset])], ' AND ')}
              GROUP BY event_id ORDER BY ts ${dir}, id ${dir} LIMIT ${raw(String(limit))}`;
}

/**
 * Keeps the rows of a window that are their event's first copy in the range. Copies of an event
 * share its date (one row each, grouped by id), except a resend after an ingest crash that lost
 * the id marks: sent without `_event_date`, it is dated at its own reception (its `event_date` is
 * its `received_at`) and lies in a later window, or later in this one, than the first copy, which a
 * page before may have listed already (ADR 0335). So a row dated at its reception is kept only if
 * no copy of its event is dated earlier in the range, looked for up to RESEND_HORIZON before the
 * window (ADR 0332: the whole range cost a page from the middle 7 times as much).
 */
function firstCopiesOnly(opts: EventPageOptions, window: { from: number; to: number }, rows: readonly Sql[]): Sql {
  const maybeResent = sql`SELECT event_id FROM events WHERE ${join([...filters(opts, false), ...rows, sql`event_date = received_at`], ' AND ')}`;
  const since = Math.max(opts.range.from, window.from - RESEND_HORIZON);
  const upToWindow = [...filters(opts, false), sql`event_date >= toDateTime(${seconds(since)})`, sql`event_date < toDateTime(${seconds(window.to)})`];
  const firsts = sql`SELECT event_id, min(event_date) FROM events WHERE ${join([...upToWindow, sql`event_id IN (${maybeResent})`], ' AND ')} GROUP BY event_id`;
  return sql`(event_date != received_at OR (event_id, event_date) IN (${firsts}))`;
}

/**
 * The range narrowed to its events' dates, and the seconds expected to hold twice the rows needed
 * (the count includes copies: an estimate); null when the range holds no event.
 */
async function sizeRange(query: Query, opts: EventPageOptions, needed: number): Promise<{ range: { from: number; to: number }; span: number } | null> {
  const where = [...filters(opts), sql`event_date >= toDateTime(${seconds(opts.range.from)})`, sql`event_date < toDateTime(${seconds(opts.range.to)})`];
  const [row] = await query<{ n: string; lo: number; hi: number }>(sql`SELECT count() AS n, toUInt32(min(event_date)) AS lo, toUInt32(max(event_date)) AS hi FROM events WHERE ${join(where, ' AND ')}`);
  const n = Number(row?.n ?? 0);
  if (n === 0) return null;
  const range = { from: Math.max(opts.range.from, Number(row.lo)), to: Math.min(opts.range.to, Number(row.hi) + 1) };
  const length = Math.max(1, range.to - range.from);
  return { range, span: Math.min(length, Math.max(1, Math.floor((length * 2 * needed) / n))) };
}

/** The current audience contact of each source contact among `pairs` (those with none are absent). */
export function audienceIdsOf(projectId: string, pairs: ReadonlyArray<{ ds: string; user: string }>): Sql {
  const tuples = join(pairs.map((p) => sql`(${p.ds}, ${p.user})`));
  return sql`SELECT data_source_id AS ds, user_id AS user, aid FROM (${latestMembership(projectId, sql`(data_source_id, user_id) IN (${tuples})`)}) WHERE gone = 0`;
}

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
 * needs; one holding too few is followed by one twice as wide. Rows are deduplicated by event id
 * (copies of an event share its date, so they meet in one window). One row beyond the page tells
 * whether more follow.
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

function filters(opts: EventPageOptions): Sql[] {
  return [
    sql`project_id = ${opts.projectId}`,
    ...(opts.eventType === undefined ? [] : [sql`event_type = ${opts.eventType}`]),
    ...(opts.dataSourceId === undefined ? [] : [sql`data_source_id = ${opts.dataSourceId}`]),
    ...(opts.contacts === undefined ? [] : [opts.contacts]),
  ];
}

const seconds = (n: number) => raw(String(Math.floor(n)));

function eventsWindow(opts: EventPageOptions, window: { from: number; to: number }, after: EventPosition | undefined, limit: number): Sql {
  const asc = opts.order === 'asc';
  const cmp = raw(asc ? '>' : '<');
  const keyset = after ? [sql`(event_date ${cmp} toDateTime(${seconds(after.date)}) OR (event_date = toDateTime(${seconds(after.date)}) AND event_id ${cmp} ${after.id}))`] : [];
  const where = [...filters(opts), sql`event_date >= toDateTime(${seconds(window.from)})`, sql`event_date < toDateTime(${seconds(window.to)})`, ...keyset];
  const dir = raw(asc ? 'ASC' : 'DESC');
  return sql`SELECT event_id AS id, any(event_type) AS type, toUInt32(any(event_date)) AS ts, toUInt32(any(received_at)) AS rts,
                    any(param_keys) AS keys, any(param_values) AS values, any(data_source_id) AS ds, any(user_id) AS user
               FROM events WHERE ${join(where, ' AND ')}
              GROUP BY event_id ORDER BY ts ${dir}, id ${dir} LIMIT ${raw(String(limit))}`;
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

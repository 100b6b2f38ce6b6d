import { join, raw, sql, type Sql } from '@meld/clickhouse';
import { audienceSelect, checkedSize, type AudienceFilterOptions } from '../audience/compile';
import { latestMembership } from '../audience/membership-sql';

/** The events an aggregation reads: a project's, of one type and source if given, dated in [from, to) (unix seconds). */
export interface EventScope {
  projectId: string;
  eventType?: string;
  dataSourceId?: string;
  range: { from: number; to: number };
  /** Only the events of source contacts this condition keeps (`eventsOfAudience`). */
  contacts?: Sql;
}

export type HistogramInterval = 'hour' | 'day' | 'week' | 'month';

/**
 * An event is counted once however often it was delivered (ADR 0335). Its copies share its type,
 * source and parameters, but not always its date: a resend after an ingest crash that lost the id
 * marks is dated at its own reception when `_event_date` was left out, so its sorting key differs
 * and merges never collapse it. Reads therefore group by the event id alone, whatever the dates:
 * counts are distinct 64-bit hashes of the ids (as the audience's event counts, ADR 0060), and an
 * event's date is its first copy's in scope (`firstCopies`).
 */
function where(scope: EventScope, also: readonly Sql[] = []): Sql {
  return join(
    [
      sql`project_id = ${scope.projectId}`,
      ...(scope.eventType === undefined ? [] : [sql`event_type = ${scope.eventType}`]),
      ...(scope.dataSourceId === undefined ? [] : [sql`data_source_id = ${scope.dataSourceId}`]),
      ...(scope.contacts === undefined ? [] : [scope.contacts]),
      sql`event_date >= toDateTime(${seconds(scope.range.from)})`,
      sql`event_date < toDateTime(${seconds(scope.range.to)})`,
      ...also,
    ],
    ' AND ',
  );
}

/** Each event in scope once, with `columns` of one of its copies, for what a count cannot give (a parameter's value, a sum). */
function deduplicated(scope: EventScope, columns: readonly Sql[], also: readonly Sql[] = []): Sql {
  return sql`SELECT ${join(columns)} FROM events WHERE ${where(scope, also)} GROUP BY event_id`;
}

/** Each event in scope once, as `d`: the date of its first copy in scope (unix seconds). */
function firstCopies(scope: EventScope): Sql {
  return sql`SELECT min(toUInt32(event_date)) AS d FROM events WHERE ${where(scope)} GROUP BY cityHash64(event_id)`;
}

/** Distinct events among the rows of a group (copies share type, source and parameters, so they fall in the same groups of those). */
const distinctEvents = raw('uniqExact(cityHash64(event_id))');

/**
 * The events of the audience contacts an audience filter selects now: those of the source
 * contacts whose current membership (not a deletion) is one of them. Events are stored by source
 * contact, so merges and splits since an event never rewrite it (0001_events.sql).
 */
export function eventsOfAudience(opts: AudienceFilterOptions): Sql {
  const selected = audienceSelect({ ...opts, columns: sql`audience_id` });
  // Only the source contacts ever in a selected contact have their latest membership grouped, not
  // the whole project's. The prefilter is a hash of the pair, not the pair: a condition on the
  // table's key makes ClickHouse 18.16 build an index set, 3× slower (ADR 0335). A colliding pair
  // let in is still grouped by its own keys and kept only if its contact is selected: exact.
  const ever = sql`cityHash64(data_source_id, user_id) IN (SELECT cityHash64(data_source_id, user_id) FROM audience_membership WHERE project_id = ${opts.projectId} AND audience_id IN (${selected}))`;
  const members = sql`SELECT data_source_id, user_id FROM (${latestMembership(opts.projectId, ever)}) WHERE gone = 0 AND aid IN (${selected})`;
  // The selection stands twice, so a filter whose own query fits can make this one pass what
  // ClickHouse parses (256 KiB): checked as a whole, a 400 at `root` (ADR 0058), not a 500.
  return checkedSize(sql`(data_source_id, user_id) IN (${members})`);
}

const seconds = (n: number) => raw(String(Math.floor(n)));
const limit = (n: number) => raw(String(Math.max(1, Math.floor(n))));
/** The JSON text of parameter `key` (the sink stores each value JSON-encoded), '' when absent. */
const parameterText = (key: string) => sql`param_values[indexOf(param_keys, ${key})]`;

/** The events in scope, and their first and last dates (unix seconds, each event at its first copy's; 0 when none). */
export function eventsInScope(scope: EventScope): Sql {
  return sql`SELECT count() AS events, min(d) AS first, max(d) AS last FROM (${firstCopies(scope)})`;
}

/** The most frequent event types or sources: `value`, `n` events, most first, ties by value. */
export function eventTermsOf(scope: EventScope, field: 'event_type' | 'data_source_id', size: number): Sql {
  return sql`SELECT v AS value, sum(n) AS n
               FROM (SELECT ${raw(field)} AS v, ${distinctEvents} AS n FROM events WHERE ${where(scope)} GROUP BY v, event_type)
              GROUP BY v ORDER BY n DESC, v LIMIT ${limit(size)}`;
}

/** How many events in scope carry parameter `key`. */
export function eventsWithParameter(scope: EventScope, key: string): Sql {
  return sql`SELECT sum(n) AS n FROM (SELECT ${distinctEvents} AS n FROM events WHERE ${where(scope, [sql`has(param_keys, ${key})`])} GROUP BY event_type)`;
}

/** The most frequent values of parameter `key` (JSON texts), most first, ties by value. */
export function parameterTermsOf(scope: EventScope, key: string, size: number): Sql {
  return sql`SELECT v AS value, count() AS n FROM (${deduplicated(scope, [sql`any(${parameterText(key)}) AS v`], [sql`has(param_keys, ${key})`])})
              GROUP BY v ORDER BY n DESC, v LIMIT ${limit(size)}`;
}

/**
 * Count, min, max, avg and sum of parameter `key` over the events whose value is a JSON number
 * (a quoted "12" is text, not counted). Extremes are null without values.
 */
export function parameterStatsOf(scope: EventScope, key: string): Sql {
  return sql`SELECT count(x) AS count, if(count(x) = 0, NULL, min(x)) AS min, if(count(x) = 0, NULL, max(x)) AS max,
                    if(count(x) = 0, NULL, avg(x)) AS avg, if(count(x) = 0, NULL, sum(x)) AS sum
               FROM (${deduplicated(scope, [sql`any(toFloat64OrNull(${parameterText(key)})) AS x`], [sql`has(param_keys, ${key})`])})`;
}

/** The start of an event date's bucket in `timeZone`, as a DateTime (ClickHouse applies the zone's offsets and DST). */
function bucketStart(date: Sql, interval: HistogramInterval, timeZone: string): Sql {
  switch (interval) {
    case 'hour':
      return sql`toStartOfHour(${date}, ${timeZone})`;
    case 'day':
      return sql`toStartOfDay(${date}, ${timeZone})`;
    case 'week':
      return sql`toDateTime(toMonday(${date}, ${timeZone}), ${timeZone})`;
    case 'month':
      return sql`toDateTime(toStartOfMonth(${date}, ${timeZone}), ${timeZone})`;
  }
}

/** Events per bucket (`b`: the bucket's start, unix seconds; each event in its first copy's), non-empty buckets only, oldest first. */
export function eventHistogramOf(scope: EventScope, interval: HistogramInterval, timeZone: string): Sql {
  return sql`SELECT toUInt32(${bucketStart(raw('toDateTime(d)'), interval, timeZone)}) AS b, count() AS n FROM (${firstCopies(scope)}) GROUP BY b ORDER BY b`;
}

/**
 * Seconds between the instants sampled to find every bucket start from `first` to `last`: less
 * than any bucket (an hour can start on a quarter of an hour where the zone is offset so), so no
 * bucket is skipped, whatever the zone and its DST changes.
 */
const PROBE_STEP: Record<HistogramInterval, number> = { hour: 900, day: 3600, week: 3600, month: 3600 };

/** How many instants `bucketStarts` samples between two dates. */
export function bucketProbes(interval: HistogramInterval, first: number, last: number): number {
  // One more than the steps: the last instant sampled is `last` itself, so its bucket is found.
  return Math.floor((last - first) / PROBE_STEP[interval]) + 2;
}

/**
 * Every bucket start (unix seconds) from the bucket of `first` to the bucket of `last`, empty ones
 * included, so a chart's gaps are zeros rather than missing points. ClickHouse computes them
 * from instants sampled closer than any bucket, as the histogram computes its buckets, so the
 * two agree on every zone.
 */
export function bucketStarts(interval: HistogramInterval, timeZone: string, first: number, last: number): Sql {
  const step = PROBE_STEP[interval];
  const instant = sql`toDateTime(least(${seconds(first)} + number * ${raw(String(step))}, ${seconds(last)}))`;
  return sql`SELECT DISTINCT toUInt32(${bucketStart(instant, interval, timeZone)}) AS b FROM numbers(${limit(bucketProbes(interval, first, last))}) ORDER BY b`;
}

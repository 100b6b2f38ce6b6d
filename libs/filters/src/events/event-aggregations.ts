import { join, raw, sql, type Sql } from '@meld/clickhouse';

/** The events an aggregation reads: a project's, of one type and source if given, dated in [from, to) (unix seconds). */
export interface EventScope {
  projectId: string;
  eventType?: string;
  dataSourceId?: string;
  range: { from: number; to: number };
}

export type HistogramInterval = 'hour' | 'day' | 'week' | 'month';

/**
 * Every aggregation reads the events deduplicated by event id first, as the listings show them
 * (ADR 0332): copies of an event (a redelivery) count once, whether merges have collapsed them
 * or not. `columns` are what the outer query needs of each event, `any()` of its copies (they
 * are the same message).
 */
function deduplicated(scope: EventScope, columns: readonly Sql[], also: readonly Sql[] = []): Sql {
  const where = [
    sql`project_id = ${scope.projectId}`,
    ...(scope.eventType === undefined ? [] : [sql`event_type = ${scope.eventType}`]),
    ...(scope.dataSourceId === undefined ? [] : [sql`data_source_id = ${scope.dataSourceId}`]),
    sql`event_date >= toDateTime(${seconds(scope.range.from)})`,
    sql`event_date < toDateTime(${seconds(scope.range.to)})`,
    ...also,
  ];
  return sql`SELECT ${join([sql`event_id`, ...columns])} FROM events WHERE ${join(where, ' AND ')} GROUP BY event_id`;
}

const seconds = (n: number) => raw(String(Math.floor(n)));
const limit = (n: number) => raw(String(Math.max(1, Math.floor(n))));
/** The JSON text of parameter `key` (the sink stores each value JSON-encoded), '' when absent. */
const parameterText = (key: string) => sql`param_values[indexOf(param_keys, ${key})]`;

/** The events in scope, and their first and last dates (unix seconds; 0 when none). */
export function eventsInScope(scope: EventScope): Sql {
  return sql`SELECT count() AS events, toUInt32(min(d)) AS first, toUInt32(max(d)) AS last FROM (${deduplicated(scope, [sql`any(event_date) AS d`])})`;
}

/** The most frequent event types or sources: `value`, `n` events, most first, ties by value. */
export function eventTermsOf(scope: EventScope, field: 'event_type' | 'data_source_id', size: number): Sql {
  return sql`SELECT v AS value, count() AS n FROM (${deduplicated(scope, [sql`any(${raw(field)}) AS v`])}) GROUP BY v ORDER BY n DESC, v LIMIT ${limit(size)}`;
}

/** How many events in scope carry parameter `key`. */
export function eventsWithParameter(scope: EventScope, key: string): Sql {
  return sql`SELECT count() AS n FROM (${deduplicated(scope, [], [sql`has(param_keys, ${key})`])})`;
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

/** Events per bucket (`b`: the bucket's start, unix seconds), non-empty buckets only, oldest first. */
export function eventHistogramOf(scope: EventScope, interval: HistogramInterval, timeZone: string): Sql {
  return sql`SELECT toUInt32(${bucketStart(raw('d'), interval, timeZone)}) AS b, count() AS n FROM (${deduplicated(scope, [sql`any(event_date) AS d`])}) GROUP BY b ORDER BY b`;
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

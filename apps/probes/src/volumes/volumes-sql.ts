import { join, raw, sql, type Sql } from '@meld/clickhouse';
import { audienceSelect, type AudienceFilterNode, latestMembership, paramValues, type AudienceValueKind } from '@meld/filters';
import { SAMPLED_BUCKETS, sampleBound } from '../shared/sampling';

/**
 * The ClickHouse reads of the event-volumes probe (ADR 0166). Events are counted deduplicated by
 * event_id (uniqExact), within each type's own window; they reach audience contacts through the
 * current membership rows (argMax by version, not deleted), as the filter compiler attaches them.
 */

export interface EventScope {
  projectId: string;
  /** Declared event types with the unix second each one's window starts. */
  types: ReadonlyArray<{ uid: string; from: number }>;
  /** Unix second the window ends. */
  to: number;
  /** Keeps events these data sources produced (probe rule 6). */
  dataSourceIds?: readonly string[];
}

/** Over the current contacts (of the root, if any): how many, and how many fall in each sampled band's buckets. */
export function populationQuery(projectId: string, root: AudienceFilterNode | undefined, now: Date): Sql {
  // audience_hash is MATERIALIZED: not among the columns of the filter compiler's branches.
  const bands = SAMPLED_BUCKETS.map((b) => sql`countIf(cityHash64(audience_id) < ${sampleBound(b)}) AS ${raw(`s${b}`)}`);
  return audienceSelect({ projectId, root, now, columns: join([sql`count() AS contacts`, ...bands]) });
}

/** Source contacts whose current audience contact passes `condition` (over `aid`). */
function currentMembers(projectId: string, conditions: Sql[]): Sql {
  const latest = latestMembership(projectId);
  return sql`SELECT data_source_id, user_id, aid FROM (${latest}) WHERE ${join([sql`gone = 0`, ...conditions], ' AND ')}`;
}

/** audience_id IN the root's contacts. */
export function rootContacts(projectId: string, root: AudienceFilterNode, now: Date): Sql {
  return sql`aid IN (${audienceSelect({ projectId, root, now, columns: sql`audience_id` })})`;
}

function eventsOf(scope: EventScope, extra: Sql[] = []): Sql {
  const earliest = Math.min(...scope.types.map((t) => t.from));
  const pre = [sql`project_id = ${scope.projectId}`, sql`event_type IN (${join(scope.types.map((t) => t.uid))})`, sql`event_date >= toDateTime(${earliest})`, sql`event_date <= toDateTime(${scope.to})`];
  // A type pruned sooner than the window keeps only its own days (probe rule 12).
  const where = scope.types.filter((t) => t.from > earliest).map((t) => sql`NOT (event_type = ${t.uid} AND event_date < toDateTime(${t.from}))`);
  if (scope.dataSourceIds) where.push(sql`data_source_id IN (${join(scope.dataSourceIds)})`);
  where.push(...extra);
  return sql`events PREWHERE ${join(pre, ' AND ')}${where.length ? sql` WHERE ${join(where, ' AND ')}` : raw('')}`;
}

/** Per declared type: distinct events in its window and the last event date (unix seconds); with `contacts`, only the events of those audience contacts. */
export function volumesQuery(scope: EventScope, contacts?: Sql): Sql {
  const members = contacts ? [sql`(data_source_id, user_id) IN (SELECT data_source_id, user_id FROM (${currentMembers(scope.projectId, [contacts])}))`] : [];
  return sql`SELECT event_type, uniqExact(event_id) AS events, toUInt32(max(event_date)) AS last FROM ${eventsOf(scope, members)} GROUP BY event_type`;
}

export interface ListedParameter {
  index: number;
  uid: string;
  kind: AudienceValueKind;
}

/**
 * The events of one type joined to their audience contact (`aid`), restricted to the sampled
 * buckets (by cityHash64(aid), the audience_hash of that contact) and to the root's contacts.
 */
export function sampledEvents(scope: EventScope, buckets: number | undefined, contacts?: Sql): Sql {
  const conditions = [...(buckets !== undefined ? [sql`cityHash64(aid) < ${sampleBound(buckets)}`] : []), ...(contacts ? [contacts] : [])];
  return sql`SELECT aid, event_id, param_keys, param_values FROM (SELECT data_source_id, user_id, event_id, param_keys, param_values FROM ${eventsOf(scope)}) ANY INNER JOIN (${currentMembers(scope.projectId, conditions)}) USING (data_source_id, user_id)`;
}

const textValues = (p: Pick<ListedParameter, 'uid' | 'kind'>) => sql`arrayMap(v -> toString(v), arrayDistinct(${paramValues(p.uid, p.kind)}))`;

/** Per sampled contact, parameter and value: the contact's events carrying it. */
function perContact(events: Sql, parameters: readonly ListedParameter[]): Sql {
  const pairs = parameters.map((p) => sql`arrayMap(v -> (toUInt16(${p.index}), v), ${textValues(p)})`);
  return sql`SELECT aid, pair.1 AS parameter, pair.2 AS value, uniqExact(event_id) AS n FROM (SELECT aid, event_id, arrayJoin(arrayConcat(${join(pairs)})) AS pair FROM (${events})) GROUP BY aid, parameter, value`;
}

/** The `limit` commonest values per parameter: events carrying them (Σn), Σn² and the contacts holding them, for the clustered error bars. */
export function parameterValuesQuery(events: Sql, parameters: readonly ListedParameter[], limit: number): Sql {
  return sql`SELECT parameter, value, sum(n) AS events, sum(n * n) AS squares, count() AS contacts FROM (${perContact(events, parameters)}) GROUP BY parameter, value ORDER BY parameter, events DESC, value LIMIT ${limit} BY parameter`;
}

/** Per parameter: (event, value) occurrences and distinct values over the sampled events. */
export function parameterTotalsQuery(events: Sql, parameters: readonly ListedParameter[]): Sql {
  return sql`SELECT parameter, sum(n) AS events, uniqExact(value) AS distinct FROM (${perContact(events, parameters)}) GROUP BY parameter`;
}

/** The commonest name value seen with each listed id value (probe rule 13). */
export function namesOfIdsQuery(events: Sql, id: ListedParameter, name: ListedParameter, ids: readonly string[]): Sql {
  const inner = sql`SELECT arrayJoin(${textValues(id)}) AS id, ${textValues(name)} AS names FROM (${events})`;
  return sql`SELECT id, name, count() AS c FROM (SELECT id, arrayJoin(names) AS name FROM (${inner}) WHERE has([${join(ids)}], id)) GROUP BY id, name ORDER BY id, c DESC, name LIMIT 1 BY id`;
}

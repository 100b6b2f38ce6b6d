import { join, raw, SAMPLED_BUCKETS, sampleBound, sql, type Sql } from '@meld/clickhouse';
import { audienceCount, audienceSelect, type AudienceFilterNode, latestMembership, paramValues, type AudienceValueKind } from '@meld/filters';

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

/** The population query's column of a band's scanned contacts: not `s<b>`, the name of a slot column a root's WHERE reads. */
export const bandColumn = (buckets: number) => `band${buckets}`;

/**
 * Over the current contacts (of the root, if any): how many, and how many fall in each sampled
 * band's buckets, as exact counts: `sum(sign)` over the collapsing snapshot in one read
 * (`audienceCount`, ADRs 0243, 0282), so a sink insert during the read shows no contact twice.
 */
export function populationQuery(projectId: string, root: AudienceFilterNode | undefined, now: Date): Sql {
  const bands = SAMPLED_BUCKETS.map((b) => [bandColumn(b), sql`audience_hash < ${sampleBound(b)}`] as const);
  return audienceCount({ projectId, root, now, counts: [['contacts'], ...bands] });
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

/**
 * Everything the parameter values need from the sampled events, in one read of them (ADR 0222):
 * per parameter, the (event, value) occurrences, the distinct values, and the `limit` commonest
 * values with their events (Σn over contacts), Σn², the contacts holding them (the clustered
 * error bars) and, for an id parameter given its name parameter, the name most often seen with
 * the value (probe rule 13; ties to the smallest name).
 *
 * Each event spreads into (parameter, value, names of the event) triples, names empty unless the
 * parameter is an id with a name partner; grouped by contact then by value. 18.16's sumMap takes
 * numeric keys only, so names are counted by cityHash64 and read back from the distinct names.
 */
export function parameterValuesQuery(events: Sql, parameters: readonly ListedParameter[], limit: number, nameOf: ReadonlyMap<number, Pick<ListedParameter, 'uid' | 'kind'>> = new Map()): Sql {
  const triples = parameters.map((p) => {
    const name = nameOf.get(p.index);
    return sql`arrayMap(v -> (toUInt16(${p.index}), v, ${name ? textValues(name) : sql`emptyArrayString()`}), ${textValues(p)})`;
  });
  const spread = sql`SELECT aid, event_id, arrayJoin(arrayConcat(${join(triples)})) AS triple FROM (${events})`;
  const perContact = sql`SELECT aid, triple.1 AS parameter, triple.2 AS value, uniqExact(event_id) AS n, sumMap(arrayMap(x -> cityHash64(x), triple.3), arrayMap(x -> toUInt64(1), triple.3)) AS seen, groupUniqArrayArray(triple.3) AS names FROM (${spread}) GROUP BY aid, parameter, value`;
  const perValue = sql`SELECT parameter, value, sum(n) AS value_events, sum(n * n) AS squares, count() AS contacts, sumMap(tupleElement(seen, 1), tupleElement(seen, 2)) AS seen_all, groupUniqArrayArray(names) AS names_all FROM (${perContact}) GROUP BY parameter, value`;
  // sumMap's keys come sorted, so the names sorted by the same hash line up with its counts. Lambdas
  // here use only their own arguments: 18.16 loses a subquery column a lambda captures.
  const named = sql`SELECT parameter, value, value_events, squares, contacts, notEmpty(names_all) AS named,
    arrayMap((s, c) -> (s, c), arraySort(s -> cityHash64(s), names_all), arrayResize(tupleElement(seen_all, 2), length(names_all))) AS counted,
    if(named, tupleElement(arraySort(x -> (-x.2, x.1), counted)[1], 1), '') AS name FROM (${perValue})`;
  return sql`SELECT parameter, sum(value_events) AS events, count() AS distinct, arraySlice(arraySort(x -> (-x.2, x.1), groupArray((value, value_events, squares, contacts, name, named))), 1, ${limit}) AS top FROM (${named}) GROUP BY parameter`;
}

import { join, sql, type Sql } from '@meld/clickhouse';

/**
 * The current contacts of a project as rows of the collapsing snapshot (ADR 0223), for a plain
 * scan: the +1 rows of states not deleted whose −1 (written when the next state or the deletion
 * came) is not there. A −1 and its +1 leave together when a merge collapses them, so the set of
 * −1 rows, small (the changes merges have not caught up with), names exactly the stale states.
 * Every aggregate then reads one row per current contact, as under FINAL, without its merge.
 * The −1 set and the scan are two reads of the table: an insert landing between them can show a
 * changed contact twice or not at all for that one query, which exact counts avoid by summing
 * `sign` in one read instead (audienceCount, ADR 0243).
 *
 * The −1 set is read before the scan chooses its parts (ADR 0341): it is a scalar subquery, which
 * ClickHouse evaluates while it analyses the query. Read after (an IN subquery over the scan's
 * output), a merge collapsing a +1/−1 pair in between took the −1 out of the set while the scan
 * still read the +1 from the parts it had chosen: the contact came out twice. The set holds
 * 64-bit hashes of (audience_id, version), cheap to carry as a constant; a collision would hide
 * one contact from one read (about 1 in 10^9 reads of 1M contacts with 60,000 −1 rows).
 *
 * The −1 check runs on the rows the conditions keep, in an outer query: ClickHouse 18.16
 * evaluates every part of a WHERE on every row (no short-circuit), so inside the scan it cost
 * every contact a lookup whatever the filter kept. `*` leaves out MATERIALIZED columns:
 * audience_hash is named.
 */
export function liveSnapshot(projectId: string, conditions: readonly Sql[] = []): Sql {
  const cancelled = sql`SELECT arrayJoin((SELECT groupArray(cityHash64(audience_id, version)) FROM audience_snapshot WHERE project_id = ${projectId} AND sign = -1))`;
  const where = [sql`project_id = ${projectId}`, sql`deleted = 0`, sql`sign = 1`, ...conditions.map((c) => sql`(${c})`)];
  return sql`(SELECT *, audience_hash FROM audience_snapshot WHERE ${join(where, ' AND ')}) WHERE cityHash64(audience_id, version) NOT IN (${cancelled})`;
}

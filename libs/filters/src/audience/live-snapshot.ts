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
 */
export function liveSnapshot(projectId: string, conditions: readonly Sql[] = []): Sql {
  const cancelled = sql`SELECT audience_id, version FROM audience_snapshot WHERE project_id = ${projectId} AND sign = -1`;
  const where = [sql`project_id = ${projectId}`, sql`deleted = 0`, sql`sign = 1`, sql`(audience_id, version) NOT IN (${cancelled})`, ...conditions.map((c) => sql`(${c})`)];
  return sql`audience_snapshot WHERE ${join(where, ' AND ')}`;
}

import { type Sql, raw, sql } from '@meld/clickhouse';

/**
 * The current membership of source contacts (ClickHouse `audience_membership`, written by the
 * probes sink): per (data_source_id, user_id), the audience contact of its latest row (`aid`)
 * and whether that row is a deletion (`gone`). Membership rows are never updated in place, so
 * every read of "who belongs to whom now" is this one query; `where` narrows the rows grouped.
 */
export function latestMembership(projectId: string, where?: Sql): Sql {
  const narrowed = where ? sql` AND ${where}` : raw('');
  return sql`SELECT data_source_id, user_id, argMax(audience_id, version) AS aid, argMax(deleted, version) AS gone FROM audience_membership WHERE project_id = ${projectId}${narrowed} GROUP BY data_source_id, user_id`;
}

/** The source contacts that belong to `audienceId` now. */
export function currentMembersOf(projectId: string, audienceId: string): Sql {
  const everMembers = sql`(data_source_id, user_id) IN (SELECT data_source_id, user_id FROM audience_membership WHERE project_id = ${projectId} AND audience_id = ${audienceId})`;
  return sql`SELECT data_source_id, user_id FROM (${latestMembership(projectId, everMembers)}) WHERE aid = ${audienceId} AND gone = 0`;
}

import { type Sql, join, raw, sql } from '@meld/clickhouse';

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
  return currentMembersWhere(projectId, raw('data_source_id, user_id'), (column) => sql`${raw(column)} = ${audienceId}`);
}

/** The source contacts that belong to any of `audienceIds` now, each with its audience id (`aid`). */
export function currentMembersOfMany(projectId: string, audienceIds: readonly string[]): Sql {
  const ids = join(audienceIds);
  return currentMembersWhere(projectId, raw('data_source_id, user_id, aid'), (column) => sql`${raw(column)} IN (${ids})`);
}

/** Only the source contacts ever in a wanted audience contact have their latest membership grouped. */
function currentMembersWhere(projectId: string, columns: Sql, wanted: (column: 'audience_id' | 'aid') => Sql): Sql {
  const everMembers = sql`(data_source_id, user_id) IN (SELECT data_source_id, user_id FROM audience_membership WHERE project_id = ${projectId} AND ${wanted('audience_id')})`;
  return sql`SELECT ${columns} FROM (${latestMembership(projectId, everMembers)}) WHERE ${wanted('aid')} AND gone = 0`;
}

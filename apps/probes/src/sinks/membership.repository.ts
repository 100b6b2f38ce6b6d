import { type ClickHouse, sql } from '@meld/clickhouse';
import type { MembershipRow, SourceContactRef } from './membership';

/** ClickHouse `audience_membership`: the current members of an audience (latest row per source contact). */
export class MembershipRepository {
  constructor(private readonly ch: ClickHouse) {}

  async currentMembers(projectId: string, audienceId: string): Promise<SourceContactRef[]> {
    const rows = await this.ch.query<{ data_source_id: string; user_id: string }>(sql`
      SELECT data_source_id, user_id FROM (
        SELECT data_source_id, user_id, argMax(audience_id, version) AS aid, argMax(deleted, version) AS del
        FROM audience_membership
        WHERE project_id = ${projectId}
          AND (data_source_id, user_id) IN (SELECT data_source_id, user_id FROM audience_membership WHERE project_id = ${projectId} AND audience_id = ${audienceId})
        GROUP BY data_source_id, user_id
      ) WHERE aid = ${audienceId} AND del = 0`);
    return rows.map((r) => ({ dataSourceId: r.data_source_id, userId: r.user_id }));
  }

  async insert(rows: readonly MembershipRow[]): Promise<void> {
    if (rows.length) await this.ch.insert('audience_membership', rows);
  }
}

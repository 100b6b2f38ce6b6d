import type { ClickHouse } from '@meld/clickhouse';
import { currentMembersOf } from '@meld/filters';
import type { MembershipRow, SourceContactRef } from './membership';

/** ClickHouse `audience_membership`: the current members of an audience (latest row per source contact). */
export class MembershipRepository {
  constructor(private readonly ch: ClickHouse) {}

  async currentMembers(projectId: string, audienceId: string): Promise<SourceContactRef[]> {
    const rows = await this.ch.query<{ data_source_id: string; user_id: string }>(currentMembersOf(projectId, audienceId));
    return rows.map((r) => ({ dataSourceId: r.data_source_id, userId: r.user_id }));
  }

  async insert(rows: readonly MembershipRow[]): Promise<void> {
    if (rows.length) await this.ch.insert('audience_membership', rows);
  }
}

import type { ClickHouse } from '@meld/clickhouse';
import { currentMembersOfMany } from '@meld/filters';
import type { MembershipStore } from './membership-batch';
import type { MembershipRow, SourceContactRef } from './membership';

/** Audience ids per read: 500 ids (twice in the query) stay well under ClickHouse's 256 KiB max_query_size. */
const READ_CHUNK = 500;

/** ClickHouse `audience_membership`: the current members of an audience (latest row per source contact). */
export class MembershipRepository implements MembershipStore {
  constructor(private readonly ch: ClickHouse) {}

  /**
   * The current members of audience ids of one project, one read per READ_CHUNK ids (each scans
   * the project's membership once, as a read of one id does): the audience sink's legacy messages
   * of a batch (ADR 0339).
   */
  async currentMembersOfMany(projectId: string, audienceIds: readonly string[]): Promise<Map<string, SourceContactRef[]>> {
    const out = new Map<string, SourceContactRef[]>();
    for (let i = 0; i < audienceIds.length; i += READ_CHUNK) {
      const rows = await this.ch.query<{ data_source_id: string; user_id: string; aid: string }>(currentMembersOfMany(projectId, audienceIds.slice(i, i + READ_CHUNK)));
      for (const r of rows) {
        const ref = { dataSourceId: r.data_source_id, userId: r.user_id };
        const members = out.get(r.aid);
        if (members) members.push(ref);
        else out.set(r.aid, [ref]);
      }
    }
    return out;
  }

  async insert(rows: readonly MembershipRow[]): Promise<void> {
    if (rows.length) await this.ch.insert('audience_membership', rows);
  }
}

import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { SourceMembership } from './trigger-decision';

/** Reads where the merge placed a source contact (identity-merge's own tables). */
@Injectable()
export class TriggerMembershipRepository {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  async membership(projectId: string, dataSourceId: string, userId: string): Promise<SourceMembership | null> {
    const rows: Array<{ version: string; deleted: boolean; audience_id: string | null; applied_version: string | null; since_write_ms: number }> = await this.ds.query(
      `SELECT s.version, s.deleted_at IS NOT NULL AS deleted, m.audience_id, m.applied_version,
              (EXTRACT(EPOCH FROM clock_timestamp() - s.updated_at) * 1000)::float8 AS since_write_ms
         FROM source_contacts s
         LEFT JOIN audience_members m ON m.project_id = s.project_id AND m.data_source_id = s.data_source_id AND m.user_id = s.user_id
        WHERE s.project_id = $1 AND s.data_source_id = $2 AND s.user_id = $3`,
      [projectId, dataSourceId, userId],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      deleted: r.deleted,
      version: BigInt(r.version),
      audienceId: r.audience_id,
      appliedVersion: r.applied_version === null ? null : BigInt(r.applied_version),
      sinceWriteMs: Number(r.since_write_ms),
    };
  }
}

import { DATA_SOURCE, MESSAGING_SOURCE } from '@meld/db';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';

/** The `meld-messaging` members an audience snapshot names (`dsContactIds` of a `snapshot` on `meld.audience.v1`). */
export interface MergedMembers {
  projectId: string;
  /** `<dataSourceId>/<E.164>`: only members whose user id is a number can be our contact of a number. */
  members: readonly string[];
}

/**
 * What a message without audience id (ADR 0184: sent to an auto-created contact identity-merge had
 * not merged within the send's wait) gets: the audience contact its number's `meld-messaging`
 * source contact belongs to now (`audience_members`, which identity-merge committed before it
 * published the snapshot), not the snapshot's id: a replayed or stale snapshot writes the current
 * one, or nothing once the member left. Redacted messages (ADR 0358) are not written.
 */
const SET_AUDIENCE = `audience_id = am.audience_id`;
const MEMBER_OF_MESSAGE = `ds.project_id = m.project_id AND ds.uid = '${MESSAGING_SOURCE.uid}'
  AND am.project_id = m.project_id AND am.data_source_id = ds.id AND am.user_id = m.destination
  AND m.audience_id IS NULL AND m.redacted_at IS NULL`;

/**
 * Gives the messages of an auto-created contact its audience id once identity-merge merged it
 * (ADRs 0184, 0358): the contact's SMS history (ADR 0159), the late consent check (ADR 0153), and
 * the status reports written from then on (webhooks, ADR 0323; timeline events, ADR 0157) name
 * it. Two writers, so that neither order of the merge and the message's commit leaves it without:
 * the snapshot's (a message committed before the merge's snapshot is processed) and the send's,
 * right after its commit (one committed after: the merge had committed before the snapshot was
 * published, so the send's read sees it). Both are one idempotent statement.
 */
@Injectable()
export class SmsAudienceBackfill {
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  /** For the snapshots of a batch: answers how many messages got their audience id. */
  async merged(snapshots: readonly MergedMembers[]): Promise<number> {
    const projects: string[] = [];
    const refs: string[] = [];
    for (const s of snapshots) {
      for (const ref of s.members) {
        projects.push(s.projectId);
        refs.push(ref);
      }
    }
    if (!refs.length) return 0;
    const [{ n }] = await this.ds.query(
      `WITH numbers AS (
         SELECT DISTINCT r.project_id, split_part(r.ref, '/', 1) AS data_source_id, substr(r.ref, strpos(r.ref, '/') + 1) AS destination
           FROM unnest($1::uuid[], $2::text[]) AS r(project_id, ref)),
       updated AS (
         UPDATE sms_messages m SET ${SET_AUDIENCE}
           FROM numbers x, data_sources ds, audience_members am
          WHERE m.project_id = x.project_id AND m.destination = x.destination AND ds.id::text = x.data_source_id AND ${MEMBER_OF_MESSAGE}
          RETURNING m.id)
       SELECT count(*)::int AS n FROM updated`,
      [projects, refs],
    );
    return n as number;
  }

  /** For one message the send just committed without audience id: answers the id it got, or null. */
  async stored(smsId: string): Promise<string | null> {
    const [row] = await this.ds.query(
      `WITH updated AS (UPDATE sms_messages m SET ${SET_AUDIENCE} FROM data_sources ds, audience_members am WHERE m.id = $1 AND ${MEMBER_OF_MESSAGE} RETURNING m.audience_id)
       SELECT audience_id AS "audienceId" FROM updated`,
      [smsId],
    );
    return row?.audienceId ?? null;
  }
}

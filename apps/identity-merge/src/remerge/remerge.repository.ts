import type { DataSource } from 'typeorm';

/** A claimed request: its project, which request it is, and where it stands. */
export interface RemergeClaim {
  projectId: string;
  /** The time naming the request, as Postgres prints it (microseconds kept): a newer change of the merging attributes replaces it. */
  requestedAt: string;
  cursor: { dataSourceId: string; userId: string } | null;
  contactsDone: number;
}

/** The rows of an UPDATE … RETURNING: TypeORM's Postgres driver answers `[rows, affected]` for them. */
function returned<T>(result: T[] | [T[], number]): T[] {
  return Array.isArray(result[0]) ? (result[0] as T[]) : (result as T[]);
}

/** How long a claim holds before another replica may take the request over. */
export const LEASE_SECONDS = 60;

/**
 * `remerge_requests` (written by the gateway with a change of merging attributes) and the
 * source contacts a request goes through, in primary-key order (ADR 0331). Every write is
 * conditional on the claimed `requested_at`: a worker whose request was replaced stops there.
 */
export class RemergeRepository {
  constructor(private readonly db: DataSource) {}

  /** The oldest request nobody holds, now leased to the caller; null when none waits. */
  async claim(): Promise<RemergeClaim | null> {
    const rows: Array<{ project_id: string; requested_at: string; cursor_data_source_id: string | null; cursor_user_id: string | null; contacts_done: string }> = await this.db.query(
      `UPDATE remerge_requests r SET lease_until = clock_timestamp() + make_interval(secs => $1)
        WHERE r.project_id = (SELECT project_id FROM remerge_requests
                               WHERE done_at IS NULL AND (lease_until IS NULL OR lease_until < clock_timestamp())
                               ORDER BY requested_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING r.project_id, r.requested_at::text AS requested_at, r.cursor_data_source_id, r.cursor_user_id, r.contacts_done`,
      [LEASE_SECONDS],
    );
    const [row] = returned(rows);
    if (!row) return null;
    return {
      projectId: row.project_id,
      requestedAt: row.requested_at,
      cursor: row.cursor_data_source_id === null ? null : { dataSourceId: row.cursor_data_source_id, userId: row.cursor_user_id! },
      contactsDone: Number(row.contacts_done),
    };
  }

  /** The next live source contacts of the project after the cursor, in primary-key order. */
  async nextContacts(projectId: string, cursor: RemergeClaim['cursor'], limit: number): Promise<Array<{ dataSourceId: string; userId: string }>> {
    const rows: Array<{ data_source_id: string; user_id: string }> = await this.db.query(
      `SELECT data_source_id, user_id FROM source_contacts
        WHERE project_id = $1 AND deleted_at IS NULL AND ($2::uuid IS NULL OR (data_source_id, user_id) > ($2::uuid, $3::text))
        ORDER BY data_source_id, user_id LIMIT $4`,
      [projectId, cursor?.dataSourceId ?? null, cursor?.userId ?? null, limit],
    );
    return rows.map((r) => ({ dataSourceId: r.data_source_id, userId: r.user_id }));
  }

  /** Records progress and renews the lease; false when the request was replaced or removed meanwhile. */
  async advance(claim: RemergeClaim, cursor: NonNullable<RemergeClaim['cursor']>, contacts: number): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `UPDATE remerge_requests SET cursor_data_source_id = $3, cursor_user_id = $4, contacts_done = contacts_done + $5,
              lease_until = clock_timestamp() + make_interval(secs => $6)
        WHERE project_id = $1 AND requested_at = $2::timestamptz AND done_at IS NULL RETURNING project_id`,
      [claim.projectId, claim.requestedAt, cursor.dataSourceId, cursor.userId, contacts, LEASE_SECONDS],
    );
    return returned(rows).length > 0;
  }

  async finish(claim: RemergeClaim): Promise<void> {
    await this.db.query(`UPDATE remerge_requests SET done_at = clock_timestamp(), lease_until = NULL WHERE project_id = $1 AND requested_at = $2::timestamptz`, [claim.projectId, claim.requestedAt]);
  }
}

import type { AudienceChange } from '@meld/contracts';

/** One row of ClickHouse `audience_membership`. */
export interface MembershipRow {
  project_id: string;
  data_source_id: string;
  user_id: string;
  audience_id: string;
  /** UInt64 as a decimal string (exact beyond 2^53). */
  version: string;
  deleted: 0 | 1;
}

export interface SourceContactRef {
  dataSourceId: string;
  userId: string;
}

/**
 * `dsContactIds` of a snapshot are `<dataSourceId>/<userId>` (identity-merge's contactRef).
 * Data-source ids are uuids (no `/`), so the first `/` separates them; a `_user_id` may hold `/`.
 */
export function parseDsContactId(ref: string): SourceContactRef | null {
  const slash = ref.indexOf('/');
  if (slash <= 0 || slash === ref.length - 1) return null;
  return { dataSourceId: ref.slice(0, slash), userId: ref.slice(slash + 1) };
}

/**
 * Version of a membership row: the merge step's time in ms, times two, plus one for a live
 * row. A later step wins; within a step, a contact listed by one audience's snapshot beats
 * its removal from another audience (messages of one step share `at`, arrive in any order).
 */
export function membershipVersion(at: string, live: boolean): string {
  return (BigInt(Date.parse(at)) * 2n + (live ? 1n : 0n)).toString();
}

export type AudienceSnapshot = Extract<AudienceChange, { kind: 'snapshot' }>;
/** The messages that change membership (`merge` needs nothing: see sinks.consumer.ts). */
export type MembershipChange = Exclude<AudienceChange, { kind: 'merge' }>;

/** The live rows a snapshot states (one per listed source contact). */
export function snapshotRows(s: AudienceSnapshot): { rows: MembershipRow[]; invalid: string[] } {
  const rows: MembershipRow[] = [];
  const invalid: string[] = [];
  const version = membershipVersion(s.at, true);
  for (const ref of s.dsContactIds) {
    const c = parseDsContactId(ref);
    if (!c) invalid.push(ref);
    else rows.push({ project_id: s.projectId, data_source_id: c.dataSourceId, user_id: c.userId, audience_id: s.audienceId, version, deleted: 0 });
  }
  return { rows, invalid };
}

/** Removal rows for the contacts that currently point at `audienceId` but the message no longer lists. */
export function removalRows(projectId: string, audienceId: string, at: string, current: readonly SourceContactRef[], keep: ReadonlySet<string>): MembershipRow[] {
  const version = membershipVersion(at, false);
  return current
    .filter((c) => !keep.has(`${c.dataSourceId}/${c.userId}`))
    .map((c) => ({ project_id: projectId, data_source_id: c.dataSourceId, user_id: c.userId, audience_id: audienceId, version, deleted: 1 as const }));
}

/**
 * The rows a message states by itself: a snapshot's live rows, and removal rows for the
 * source contacts identity-merge says left the audience contact (`removedDsContactIds`: moved
 * away or deleted; every member for a tombstone). `removalsKnown` is false for messages
 * without that list (published before it existed): the sink must then derive removals from
 * the members it stored (`removalRows`). Refs that are not `<dataSourceId>/<userId>` are in
 * `invalid`.
 */
export function messageRows(m: MembershipChange): { rows: MembershipRow[]; invalid: string[]; removalsKnown: boolean } {
  const live = m.kind === 'snapshot' ? snapshotRows(m) : { rows: [], invalid: [] };
  if (!m.removedDsContactIds) return { ...live, removalsKnown: false };
  const gone: SourceContactRef[] = [];
  const invalid = [...live.invalid];
  for (const ref of m.removedDsContactIds) {
    const c = parseDsContactId(ref);
    if (c) gone.push(c);
    else invalid.push(ref);
  }
  // A ref both listed and removed cannot come from identity-merge; live wins, as between messages.
  const keep = new Set(m.kind === 'snapshot' ? m.dsContactIds : []);
  return { rows: [...live.rows, ...removalRows(m.projectId, m.audienceId, m.at, gone, keep)], invalid, removalsKnown: true };
}

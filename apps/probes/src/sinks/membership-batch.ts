import { type MembershipChange, type MembershipRow, type SourceContactRef, removalRows } from './membership';

/** One message's part of a batch's membership write. */
export interface MembershipStep {
  change: MembershipChange;
  /** The rows the message states by itself (`messageRows`). */
  rows: MembershipRow[];
  /** False for a message without `removedDsContactIds`: its removals come from the stored members. */
  removalsKnown: boolean;
}

/** The stored members of audience ids, per project then audience id (ids are user-keyed: Maps, never object keys). */
export type CurrentMembers = ReadonlyMap<string, ReadonlyMap<string, readonly SourceContactRef[]>>;

/** What the batch write needs of ClickHouse `audience_membership` (MembershipRepository). */
export interface MembershipStore {
  /** The current members of each of `audienceIds` (one project); an id without members may be left out. */
  currentMembersOfMany(projectId: string, audienceIds: readonly string[]): Promise<Map<string, SourceContactRef[]>>;
  insert(rows: readonly MembershipRow[]): Promise<void>;
}

/**
 * Cuts a batch, in taken order, into rounds whose stored-member reads can all run before the
 * round's rows are written: a round ends before a legacy message (no `removedDsContactIds`) whose
 * audience id an earlier message of the round already names. Its read must see those rows, as it
 * did when the per-message runner stored each message before the next of its key (ADR 0339). A
 * batch of current messages (identity-merge always lists removals) is one round with no read.
 */
export function membershipRounds(steps: readonly MembershipStep[]): MembershipStep[][] {
  const rounds: MembershipStep[][] = [];
  let round: MembershipStep[] = [];
  let named = new Map<string, Set<string>>();
  for (const step of steps) {
    const { projectId, audienceId } = step.change;
    if (!step.removalsKnown && named.get(projectId)?.has(audienceId)) {
      rounds.push(round);
      round = [];
      named = new Map();
    }
    round.push(step);
    const ids = named.get(projectId);
    if (ids) ids.add(audienceId);
    else named.set(projectId, new Set([audienceId]));
  }
  if (round.length) rounds.push(round);
  return rounds;
}

/** The legacy messages' audience ids of a round, per project (what its reads ask for). */
export function legacyIds(round: readonly MembershipStep[]): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const { change, removalsKnown } of round) {
    if (removalsKnown) continue;
    const ids = out.get(change.projectId);
    if (ids) ids.add(change.audienceId);
    else out.set(change.projectId, new Set([change.audienceId]));
  }
  return new Map([...out].map(([projectId, ids]) => [projectId, [...ids]]));
}

/**
 * The rows of a round: each message's own rows, and for a legacy message removal rows for the
 * stored members it no longer lists (every one for a tombstone).
 */
export function roundRows(round: readonly MembershipStep[], current: CurrentMembers): MembershipRow[] {
  return round.flatMap(({ change, rows, removalsKnown }) => {
    if (removalsKnown) return rows;
    const stored = current.get(change.projectId)?.get(change.audienceId) ?? [];
    const keep = new Set(change.kind === 'snapshot' ? change.dsContactIds : []);
    return [...rows, ...removalRows(change.projectId, change.audienceId, change.at, stored, keep)];
  });
}

/**
 * Writes a batch's membership in taken order: per round, the stored members of its legacy
 * messages (one read per project and round, not one per message), then its rows in one insert.
 * Idempotent for a replay (the sink runner's rule): rows carry their message's version and the
 * table keeps the highest per source contact, so rewriting them changes nothing; a replayed
 * legacy message may read members stored by later messages of the first attempt, and the removal
 * rows that adds carry the older message's version, which those later rows beat.
 */
export async function writeMembership(store: MembershipStore, steps: readonly MembershipStep[]): Promise<void> {
  for (const round of membershipRounds(steps)) {
    const reads = legacyIds(round);
    const current = new Map(await Promise.all([...reads].map(async ([projectId, ids]) => [projectId, await store.currentMembersOfMany(projectId, ids)] as const)));
    const rows = roundRows(round, current);
    if (rows.length) await store.insert(rows);
  }
}

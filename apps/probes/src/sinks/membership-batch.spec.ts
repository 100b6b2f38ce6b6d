import type { AudienceChange } from '@meld/contracts';
import { DeadLetterError } from '@meld/kafka';
import { audienceSinkRow } from './audience.sink';
import { type MembershipStep, type MembershipStore, legacyIds, membershipRounds, writeMembership } from './membership-batch';
import { type MembershipRow, type SourceContactRef, membershipVersion } from './membership';
import { snapshotChange } from '../../test/audience-change';

const t = (minute: number) => `2026-11-20T10:0${minute}:00.000Z`;
const tombstone = (audienceId: string, at: string, removed?: string[]): AudienceChange => ({
  schemaVersion: 1,
  kind: 'tombstone',
  projectId: 'p',
  audienceId,
  version: 9,
  at,
  ...(removed ? { removedDsContactIds: removed } : {}),
});
const steps = (...messages: AudienceChange[]): MembershipStep[] => messages.map((m) => audienceSinkRow(m)!);

/**
 * audience_membership in memory, read as ClickHouse reads it: per source contact the row of the
 * highest version (ReplacingMergeTree, argMax). Counts the reads and keeps every insert.
 */
class MemoryMembership implements MembershipStore {
  readonly rows: MembershipRow[] = [];
  readonly inserts: MembershipRow[][] = [];
  readonly reads: Array<{ projectId: string; audienceIds: readonly string[] }> = [];

  async currentMembersOfMany(projectId: string, audienceIds: readonly string[]): Promise<Map<string, SourceContactRef[]>> {
    this.reads.push({ projectId, audienceIds });
    const out = new Map<string, SourceContactRef[]>();
    for (const [id, refs] of this.current(projectId)) if (audienceIds.includes(id)) out.set(id, refs);
    return out;
  }

  async insert(rows: readonly MembershipRow[]): Promise<void> {
    this.inserts.push([...rows]);
    this.rows.push(...rows);
  }

  /** Current members per audience id: `<dataSourceId>/<userId>`, sorted. */
  members(projectId = 'p'): Record<string, string[]> {
    return Object.fromEntries([...this.current(projectId)].map(([id, refs]) => [id, refs.map((r) => `${r.dataSourceId}/${r.userId}`).sort()]));
  }

  private current(projectId: string): Map<string, SourceContactRef[]> {
    const latest = new Map<string, MembershipRow>();
    for (const r of this.rows) {
      if (r.project_id !== projectId) continue;
      const key = `${r.data_source_id}/${r.user_id}`;
      const had = latest.get(key);
      if (!had || BigInt(r.version) > BigInt(had.version)) latest.set(key, r);
    }
    const out = new Map<string, SourceContactRef[]>();
    for (const r of latest.values()) {
      if (r.deleted) continue;
      const ref = { dataSourceId: r.data_source_id, userId: r.user_id };
      out.set(r.audience_id, [...(out.get(r.audience_id) ?? []), ref]);
    }
    return out;
  }
}

describe('audienceSinkRow', () => {
  it('stores nothing for a merge and dead-letters malformed refs by count, never naming them (ADR 0338)', () => {
    expect(audienceSinkRow({ schemaVersion: 1, kind: 'merge', projectId: 'p', audienceId: 'a', version: 2, at: t(0), absorbedIds: ['b'] })).toBeUndefined();
    const bad = () => audienceSinkRow(snapshotChange('p', 'a', ['d/ok', 'jane@example.com'], t(0), ['+33612345678']));
    expect(bad).toThrow(DeadLetterError);
    expect(bad).toThrow('2 dsContactIds not of the form <dataSourceId>/<userId>');
    expect(bad).not.toThrow(/jane|3361/);
  });

  it('keeps the rows the message states and whether it lists its removals', () => {
    const row = audienceSinkRow(snapshotChange('p', 'a', ['d/x'], t(0), ['d/y']))!;
    expect(row.removalsKnown).toBe(true);
    expect(row.rows.map((r) => [r.user_id, r.deleted])).toEqual([
      ['x', 0],
      ['y', 1],
    ]);
    expect(audienceSinkRow(snapshotChange('p', 'a', ['d/x'], t(0)))!.removalsKnown).toBe(false);
  });
});

describe('membershipRounds', () => {
  it('keeps a batch of messages listing their removals in one round, whatever ids repeat', () => {
    const batch = steps(snapshotChange('p', 'a', ['d/x'], t(0), []), snapshotChange('p', 'a', ['d/x', 'd/y'], t(1), []), tombstone('a', t(2), ['d/x', 'd/y']));
    expect(membershipRounds(batch)).toEqual([batch]);
    expect(legacyIds(batch)).toEqual(new Map());
  });

  it('cuts before a legacy message whose audience id the round already names, in the same project only', () => {
    const [a1, b1, a2, aOther, b2] = steps(snapshotChange('p', 'a', ['d/x'], t(0), []), snapshotChange('p', 'b', ['d/y'], t(0)), snapshotChange('p', 'a', ['d/x'], t(1)), snapshotChange('q', 'a', ['d/z'], t(1)), snapshotChange('p', 'b', ['d/y'], t(2), []));
    expect(membershipRounds([a1, b1, a2, aOther, b2])).toEqual([
      [a1, b1],
      [a2, aOther, b2],
    ]);
    expect(legacyIds([a2, aOther, b2])).toEqual(
      new Map([
        ['p', ['a']],
        ['q', ['a']],
      ]),
    );
  });
});

describe('writeMembership', () => {
  it('writes a batch of current messages in one insert with no read', async () => {
    const store = new MemoryMembership();
    await writeMembership(store, steps(snapshotChange('p', 'a', ['d/x', 'd/y'], t(0), []), snapshotChange('p', 'b', ['d/z'], t(0), []), snapshotChange('p', 'a', ['d/x'], t(1), ['d/y'])));
    expect(store.reads).toEqual([]);
    expect(store.inserts).toHaveLength(1);
    expect(store.members()).toEqual({ a: ['d/x'], b: ['d/z'] });
  });

  it('lets a legacy message read the members the earlier messages of its id in the same batch stored', async () => {
    const store = new MemoryMembership();
    await store.insert([{ project_id: 'p', data_source_id: 'd', user_id: 'old', audience_id: 'a', version: membershipVersion(t(0), true), deleted: 0 }]);
    // Without removal lists: a gains x and y (old leaves), then drops y, then is deleted; b, read once, keeps its own.
    await writeMembership(store, steps(snapshotChange('p', 'a', ['d/x', 'd/y'], t(1)), snapshotChange('p', 'b', ['d/z'], t(1)), snapshotChange('p', 'a', ['d/x'], t(2))));
    expect(store.members()).toEqual({ a: ['d/x'], b: ['d/z'] });
    // One read per round: the first for a and b together, the second after the first round's rows were stored.
    expect(store.reads).toEqual([
      { projectId: 'p', audienceIds: ['a', 'b'] },
      { projectId: 'p', audienceIds: ['a'] },
    ]);
    await writeMembership(store, steps(snapshotChange('p', 'a', ['d/x', 'd/w'], t(3)), tombstone('a', t(4))));
    expect(store.members()).toEqual({ b: ['d/z'] });
  });

  it('leaves the same membership when a batch is written again (a replay after a crash or a failed write)', async () => {
    const store = new MemoryMembership();
    const batch = steps(snapshotChange('p', 'a', ['d/x', 'd/y'], t(1)), snapshotChange('p', 'b', ['d/y'], t(2), []), snapshotChange('p', 'a', ['d/x'], t(2)), tombstone('c', t(2), ['d/q']), snapshotChange('p', 'a', ['d/x', 'd/v'], t(3)));
    await writeMembership(store, batch);
    const once = store.members();
    expect(once).toEqual({ a: ['d/v', 'd/x'], b: ['d/y'] });
    await writeMembership(store, batch);
    expect(store.members()).toEqual(once);
  });
});

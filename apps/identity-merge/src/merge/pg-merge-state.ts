import type { EntityManager } from 'typeorm';
import { contactRef, type SourceContact } from './merge-core';
import { keyString, type MergeKey } from './merge-keys';
import type { MergeStateReader } from './merge-step';

/** `<dataSourceId>/<userId>` → parts; data source ids are uuids, so the first `/` splits. */
export function splitRef(ref: string): { dataSourceId: string; userId: string } {
  const i = ref.indexOf('/');
  return { dataSourceId: ref.slice(0, i), userId: ref.slice(i + 1) };
}

/** Refs as the two arrays the `REFS` unnest takes ($2, $3). */
export function refArrays(refs: readonly string[]): [string[], string[]] {
  const parts = refs.map(splitRef);
  return [parts.map((p) => p.dataSourceId), parts.map((p) => p.userId)];
}

/** The refs of $2/$3 as rows, with their position (`ord`) in the array. */
export const REFS = `unnest($2::uuid[], $3::text[]) WITH ORDINALITY AS r(data_source_id, user_id, ord)`;

/** What the step knows of one ref after loading it (one query for many refs). */
export interface RefState {
  /** The live source contact, or null when deleted or unknown. */
  contact: SourceContact | null;
  /** `source_contacts.version` read with the attributes (live contacts). */
  version: string | null;
  /** `source_contacts.live_since`: the version its current life began at (0 when unknown). */
  liveSince: string | null;
  /** `audience_members.applied_version`, null without a member row. */
  applied: string | null;
  /** Current audience id and merge seq (`audience_members`). */
  audienceId: string | null;
  seq: number | null;
  /** When the merge first wrote its member row (null without one, or for a row older than the column). */
  firstAt: Date | null;
  /** Applied keys (`merge_keys`). */
  keys: MergeKey[];
}

/**
 * Reads the merge state of one project inside the step's transaction. Everything the step
 * needs about a set of refs (live row, member row, applied keys, a new merge seq) comes in
 * one query, kept for the step: planMerge asks for the live contacts, assignments and keys
 * of the same frontier in turn, and the step first checks the versions of the same refs.
 */
export class PgMergeStateReader implements MergeStateReader {
  private readonly states = new Map<string, RefState>();

  constructor(
    private readonly em: EntityManager,
    private readonly projectId: string,
  ) {}

  /** Loads the refs not loaded yet. */
  async load(refs: readonly string[]): Promise<void> {
    const missing = [...new Set(refs.filter((r) => !this.states.has(r)))];
    if (!missing.length) return;
    const rows: Array<{
      data_source_id: string;
      user_id: string;
      live: boolean;
      attributes: SourceContact['attributes'] | null;
      attribute_at: Record<string, string> | null;
      version: string | null;
      live_since: string | null;
      seq: string | null;
      fresh: string | null;
      applied: string | null;
      first_at: Date | null;
      audience_id: string | null;
      keys: Array<[string, string]>;
    }> = await this.em.query(
      // LATERAL … LIMIT 1: one primary-key probe per ref whatever the statistics say (a project
      // that grew since the last ANALYZE otherwise gets hash joins over all its contacts).
      `SELECT r.data_source_id, r.user_id, s.user_id IS NOT NULL AS live, s.attributes, s.attribute_at, s.version, s.live_since, m.seq,
              CASE WHEN s.user_id IS NOT NULL AND m.seq IS NULL THEN nextval(pg_get_serial_sequence('audience_members', 'seq')) END AS fresh,
              m.applied_version AS applied, m.first_at, m.audience_id,
              (SELECT COALESCE(json_agg(json_build_array(k.attribute, k.value)), '[]') FROM merge_keys k
                WHERE k.project_id = $1 AND k.data_source_id = r.data_source_id AND k.user_id = r.user_id) AS keys
         FROM ${REFS}
         LEFT JOIN LATERAL (SELECT s.user_id, s.attributes, s.attribute_at, s.version, s.live_since FROM source_contacts s
                             WHERE s.project_id = $1 AND s.data_source_id = r.data_source_id AND s.user_id = r.user_id AND s.deleted_at IS NULL LIMIT 1) s ON true
         LEFT JOIN LATERAL (SELECT m.seq, m.applied_version, m.first_at, m.audience_id FROM audience_members m
                             WHERE m.project_id = $1 AND m.data_source_id = r.data_source_id AND m.user_id = r.user_id LIMIT 1) m ON true
        ORDER BY r.ord`,
      [this.projectId, ...refArrays(missing)],
    );
    // A contact the merge has not seen yet is the youngest: it takes the next seq now, in the
    // order the refs were named (a batch: the order its messages came in), and keeps it when
    // its member row is written. nextval runs in whatever order Postgres evaluates the rows,
    // so the values drawn are handed out again in ref order.
    const fresh = rows
      .filter((r) => r.fresh !== null)
      .map((r) => BigInt(r.fresh!))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    let next = 0;
    for (const row of rows) {
      const ref = contactRef({ dataSourceId: row.data_source_id, userId: row.user_id });
      const seq = row.seq ?? (row.fresh !== null ? String(fresh[next++]) : null);
      this.states.set(ref, {
        contact: row.live ? { dataSourceId: row.data_source_id, userId: row.user_id, attributes: row.attributes!, attributeAt: row.attribute_at!, seq: Number(seq) } : null,
        version: row.version,
        liveSince: row.live_since,
        applied: row.applied,
        audienceId: row.audience_id,
        seq: row.seq === null ? null : Number(row.seq),
        firstAt: row.first_at,
        keys: row.keys.map(([attribute, value]) => ({ attribute, value })),
      });
    }
  }

  private async statesOf(refs: readonly string[]): Promise<Array<[string, RefState]>> {
    await this.load(refs);
    return refs.map((r) => [r, this.states.get(r)!]);
  }

  /**
   * The refs among `refs` a step must look at: all but those whose `applied_version` already
   * equals the live row's version (replays, and contacts an earlier step already merged at
   * their latest version). A deleted or unknown contact always goes through: its step drops
   * whatever is left of it.
   */
  async pending(refs: readonly string[]): Promise<string[]> {
    return (await this.statesOf(refs)).filter(([, s]) => !(s.contact && s.applied !== null && BigInt(s.applied) >= BigInt(s.version!))).map(([r]) => r);
  }

  /**
   * The live contacts among the loaded `refs` whose member row was applied in an earlier life of
   * theirs: deleted and written again before the merge saw the delete (ADR 0027).
   */
  reborn(refs: readonly string[]): string[] {
    return refs.filter((r) => {
      const s = this.states.get(r);
      return s?.contact && s.applied !== null && BigInt(s.applied) < BigInt(s.liveSince ?? '0');
    });
  }

  /** The step sees these loaded refs as deleted: it applies the delete the merge missed (ADR 0027). */
  seeDeleted(refs: readonly string[]): void {
    for (const ref of refs) {
      const s = this.states.get(ref);
      if (s) this.states.set(ref, { ...s, contact: null, version: null });
    }
  }

  /**
   * What was loaded for a ref (every ref the step looked at). Its `version` is the live row's
   * as read with its attributes: what the step applies. Reading it again when writing
   * `applied_version` could see a write committed in between, and mark a version applied
   * whose attributes the step never saw.
   */
  stateOf(ref: string): RefState | undefined {
    return this.states.get(ref);
  }

  async liveContacts(refs: readonly string[]): Promise<SourceContact[]> {
    return (await this.statesOf(refs)).flatMap(([, s]) => (s.contact ? [s.contact] : []));
  }

  async keysOfRefs(refs: readonly string[]): Promise<Map<string, MergeKey[]>> {
    return new Map((await this.statesOf(refs)).map(([r, s]) => [r, s.keys]));
  }

  async assignments(refs: readonly string[]): Promise<Map<string, string>> {
    return new Map((await this.statesOf(refs)).flatMap(([r, s]) => (s.audienceId ? [[r, s.audienceId] as const] : [])));
  }

  async refsWithKeys(keys: readonly MergeKey[], limit: number): Promise<{ refs: string[]; hot: MergeKey[] }> {
    const rows: Array<{ attribute: string; value: string; data_source_id: string; user_id: string }> = await this.em.query(
      // Index probes per key, as in load(): OFFSET 0 keeps the planner from flattening the
      // subquery into a join it may plan over all the project's keys. At most limit + 1 holders
      // of a key are read: more than the limit makes it hot, and its holders are not wanted (ADR 0350).
      `SELECT q.attribute, q.value, k.data_source_id, k.user_id FROM unnest($2::text[], $3::text[]) AS q(attribute, value)
         CROSS JOIN LATERAL (SELECT k.data_source_id, k.user_id FROM merge_keys k
                              WHERE k.project_id = $1 AND k.attribute = q.attribute AND k.value = q.value LIMIT $4::bigint) k`,
      [this.projectId, keys.map((k) => k.attribute), keys.map((k) => k.value), String(BigInt(limit) + 1n)],
    );
    const byKey = new Map<string, { key: MergeKey; refs: string[] }>();
    for (const r of rows) {
      const key = { attribute: r.attribute, value: r.value };
      const entry = byKey.get(keyString(key)) ?? byKey.set(keyString(key), { key, refs: [] }).get(keyString(key))!;
      entry.refs.push(contactRef({ dataSourceId: r.data_source_id, userId: r.user_id }));
    }
    const held = [...byKey.values()];
    return { refs: [...new Set(held.filter((h) => h.refs.length <= limit).flatMap((h) => h.refs))], hot: held.filter((h) => h.refs.length > limit).map((h) => h.key) };
  }

  async holderCounts(keys: ReadonlyArray<{ key: MergeKey; upTo: number }>): Promise<Map<string, number>> {
    if (!keys.length) return new Map();
    const rows: Array<{ attribute: string; value: string; n: number }> = await this.em.query(
      `SELECT q.attribute, q.value, (SELECT count(*)::int FROM (SELECT 1 FROM merge_keys k
                                       WHERE k.project_id = $1 AND k.attribute = q.attribute AND k.value = q.value LIMIT q.up_to) x) AS n
         FROM unnest($2::text[], $3::text[], $4::int[]) AS q(attribute, value, up_to)`,
      [this.projectId, keys.map((k) => k.key.attribute), keys.map((k) => k.key.value), keys.map((k) => k.upTo)],
    );
    return new Map(rows.map((r) => [keyString({ attribute: r.attribute, value: r.value }), r.n]));
  }

  async membersOf(audienceIds: readonly string[]): Promise<string[]> {
    const rows: Array<{ data_source_id: string; user_id: string }> = await this.em.query(
      `SELECT data_source_id, user_id FROM audience_members WHERE project_id = $1 AND audience_id = ANY($2::uuid[])`,
      [this.projectId, audienceIds],
    );
    return rows.map((r) => contactRef({ dataSourceId: r.data_source_id, userId: r.user_id }));
  }
}

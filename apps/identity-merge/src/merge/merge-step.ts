import { DEFAULT_HOT_KEY_LIMIT, computeAudience, contactRef, type DataSourceInfo, type MergeOptions, type MergeResult, type SourceContact } from './merge-core';
import { linkedRef } from '@meld/contracts';
import { KeyNormaliser, keyString, type MergeKey } from './merge-keys';

/**
 * What one incremental merge step reads. The Postgres implementation answers from the
 * tables inside the step's locked transaction; the tests use an in-memory one, so the
 * property tests exercise exactly this algorithm.
 */
export interface MergeStateReader {
  /** Live (not deleted) source contacts among the refs, with their arrival seq. */
  liveContacts(refs: readonly string[]): Promise<SourceContact[]>;
  /**
   * Refs that currently hold one of the keys (the applied `merge_keys`), except for keys more
   * than `limit` refs hold: those are returned in `hot`, without their holders.
   */
  refsWithKeys(keys: readonly MergeKey[], limit: number): Promise<{ refs: string[]; hot: MergeKey[] }>;
  /** How many refs hold each key (applied), counted up to its `upTo`; by `keyString`. */
  holderCounts(keys: ReadonlyArray<{ key: MergeKey; upTo: number }>): Promise<Map<string, number>>;
  /** Applied keys of each ref. */
  keysOfRefs(refs: readonly string[]): Promise<Map<string, MergeKey[]>>;
  /** Current audience id of each ref that has one (`audience_members`). */
  assignments(refs: readonly string[]): Promise<Map<string, string>>;
  /** Every member ref of the audience ids. */
  membersOf(audienceIds: readonly string[]): Promise<string[]>;
}

export interface MergePlan {
  /** Every ref the step looked at (its members, keys and assignment are rewritten). */
  refs: string[];
  /** The live contacts among them. */
  contacts: SourceContact[];
  /** Their previous audience ids. */
  previous: Map<string, string>;
  /** New keys of each live ref. */
  keys: Map<string, MergeKey[]>;
  result: MergeResult;
}

/**
 * The region a change can affect: the changed contacts, the members of the audience
 * contacts they belonged to, and everything connected to those through merge keys, old
 * (applied) or new (live). It is closed under shared keys, so merging it alone gives the
 * same components as merging the whole project.
 *
 * Except through hot keys (ADR 0350): a key more than `hotKeyLimit` contacts hold, before and
 * after the step, merges none of them, so the region does not take in its holders (a step would
 * otherwise read every contact sharing a switchboard number, under the project's lock). A key
 * that was hot and no longer is, or is hot only now, brings its holders in (at most the limit
 * and the step's contacts) so they merge or split.
 */
export async function planMerge(
  reader: MergeStateReader,
  changed: readonly string[],
  sources: ReadonlyMap<string, DataSourceInfo>,
  options: MergeOptions,
  newId: (oldestMemberRef: string) => string,
): Promise<MergePlan> {
  const normaliser = new KeyNormaliser(options);
  const limit = options.hotKeyLimit ?? DEFAULT_HOT_KEY_LIMIT;
  const seenRefs = new Set<string>();
  const seenKeys = new Set<string>();
  const seenAudiences = new Set<string>();
  const contacts = new Map<string, SourceContact>();
  const previous = new Map<string, string>();
  const applied = new Map<string, MergeKey[]>();
  /** Keys whose holders were more than the limit when seen: not expanded. */
  const hotBefore = new Map<string, MergeKey>();
  let frontier = [...new Set(changed)];
  while (frontier.length) {
    while (frontier.length) {
      for (const r of frontier) seenRefs.add(r);
      // Sequential on purpose: the Postgres reader shares one transaction connection.
      const live = await reader.liveContacts(frontier);
      const assigned = await reader.assignments(frontier);
      const oldKeys = await reader.keysOfRefs(frontier);
      const next = new Set<string>();
      for (const [ref, id] of assigned) previous.set(ref, id);
      const newAudiences = [...new Set(assigned.values())].filter((id) => !seenAudiences.has(id));
      newAudiences.forEach((id) => seenAudiences.add(id));
      const keys: MergeKey[] = [];
      const addKey = (k: MergeKey) => {
        const s = keyString(k);
        if (!seenKeys.has(s)) {
          seenKeys.add(s);
          keys.push(k);
        }
      };
      for (const [ref, ks] of oldKeys) {
        applied.set(ref, ks);
        ks.forEach(addKey);
      }
      for (const c of live) {
        contacts.set(contactRef(c), c);
        normaliser.keysOf(c.userId, c.attributes, c.dataSourceId).forEach(addKey);
        // A messaging contact's link names its member (ADR 0362), whose `@member` key may not be applied yet.
        const member = options.linkSources?.has(c.dataSourceId) ? linkedRef(c.userId) : null;
        if (member !== null && !seenRefs.has(member)) next.add(member);
      }
      const members = newAudiences.length ? await reader.membersOf(newAudiences) : [];
      const holders = keys.length ? await reader.refsWithKeys(keys, limit) : { refs: [], hot: [] };
      for (const k of holders.hot) hotBefore.set(keyString(k), k);
      for (const r of [...members, ...holders.refs]) if (!seenRefs.has(r)) next.add(r);
      frontier = [...next];
    }
    // A key hot when seen stays out of the region only if it is still hot once the step applies:
    // its holders outside the region (applied) plus the region's contacts that hold it now.
    if (!hotBefore.size) break;
    const inRegion = (of: (ref: string) => readonly MergeKey[], refs: Iterable<string>) => {
      const n = new Map<string, number>();
      for (const ref of refs) for (const k of of(ref)) if (hotBefore.has(keyString(k))) n.set(keyString(k), (n.get(keyString(k)) ?? 0) + 1);
      return n;
    };
    const appliedInRegion = inRegion((r) => applied.get(r) ?? [], seenRefs);
    const nowInRegion = inRegion((r) => (contacts.has(r) ? normaliser.keysOf(contacts.get(r)!.userId, contacts.get(r)!.attributes, contacts.get(r)!.dataSourceId) : []), seenRefs);
    const counts = await reader.holderCounts([...hotBefore.values()].map((key) => ({ key, upTo: limit + 1 + (appliedInRegion.get(keyString(key)) ?? 0) })));
    const cooled: MergeKey[] = [];
    for (const [s, key] of hotBefore) {
      const after = (counts.get(s) ?? 0) - (appliedInRegion.get(s) ?? 0) + (nowInRegion.get(s) ?? 0);
      if (after <= limit) cooled.push(key);
    }
    for (const key of cooled) hotBefore.delete(keyString(key));
    if (!cooled.length) break;
    // No longer hot: its holders (now at most the limit plus the step's) merge again.
    const { refs } = await reader.refsWithKeys(cooled, Number.MAX_SAFE_INTEGER);
    frontier = refs.filter((r) => !seenRefs.has(r));
  }
  const list = [...contacts.values()];
  const keys = new Map(list.map((c) => [contactRef(c), normaliser.keysOf(c.userId, c.attributes, c.dataSourceId)]));
  const result = computeAudience(list, sources, { ...options, hotKeys: hotKeysAfter(keys, hotBefore, limit) }, previous, newId);
  return { refs: [...seenRefs].sort(), contacts: list, previous, keys, result };
}

/**
 * The project's hot keys among those the region holds: the keys still hot from outside it, and
 * those more than `limit` of its contacts hold (every holder of a key the region expanded
 * through is in it).
 */
function hotKeysAfter(keys: ReadonlyMap<string, readonly MergeKey[]>, hotBefore: ReadonlyMap<string, MergeKey>, limit: number): Set<string> {
  const holders = new Map<string, number>();
  for (const ks of keys.values()) for (const k of ks) holders.set(keyString(k), (holders.get(keyString(k)) ?? 0) + 1);
  return new Set([...hotBefore.keys(), ...[...holders].filter(([, n]) => n > limit).map(([k]) => k)]);
}

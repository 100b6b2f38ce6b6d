import { computeAudience, contactRef, type DataSourceInfo, type MergeOptions, type MergeResult, type SourceContact } from './merge-core';
import { KeyNormaliser, keyString, type MergeKey } from './merge-keys';

/**
 * What one incremental merge step reads. The Postgres implementation answers from the
 * tables inside the step's locked transaction; the tests use an in-memory one, so the
 * property tests exercise exactly this algorithm.
 */
export interface MergeStateReader {
  /** Live (not deleted) source contacts among the refs, with their arrival seq. */
  liveContacts(refs: readonly string[]): Promise<SourceContact[]>;
  /** Refs that currently hold one of the keys (the applied `merge_keys`). */
  refsWithKeys(keys: readonly MergeKey[]): Promise<string[]>;
  /** Applied keys of the refs. */
  keysOfRefs(refs: readonly string[]): Promise<MergeKey[]>;
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
 */
export async function planMerge(
  reader: MergeStateReader,
  changed: readonly string[],
  sources: ReadonlyMap<string, DataSourceInfo>,
  options: MergeOptions,
  newId: (oldestMemberRef: string) => string,
): Promise<MergePlan> {
  const normaliser = new KeyNormaliser(options);
  const seenRefs = new Set<string>();
  const seenKeys = new Set<string>();
  const seenAudiences = new Set<string>();
  const contacts = new Map<string, SourceContact>();
  const previous = new Map<string, string>();
  let frontier = [...new Set(changed)];
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
    oldKeys.forEach(addKey);
    for (const c of live) {
      contacts.set(contactRef(c), c);
      normaliser.keysOf(c.userId, c.attributes).forEach(addKey);
    }
    const members = newAudiences.length ? await reader.membersOf(newAudiences) : [];
    const holders = keys.length ? await reader.refsWithKeys(keys) : [];
    for (const r of [...members, ...holders]) if (!seenRefs.has(r)) next.add(r);
    frontier = [...next];
  }
  const list = [...contacts.values()];
  const result = computeAudience(list, sources, options, previous, newId);
  const keys = new Map(list.map((c) => [contactRef(c), normaliser.keysOf(c.userId, c.attributes)]));
  return { refs: [...seenRefs].sort(), contacts: list, previous, keys, result };
}

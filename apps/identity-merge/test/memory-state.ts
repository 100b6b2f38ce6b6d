import { dict } from '@meld/contracts';
import { contactRef, type AttributeValue, type AudienceContact, type SourceContact } from '../src/merge/merge-core';
import { keyString, type MergeKey } from '../src/merge/merge-keys';
import type { MergePlan, MergeStateReader } from '../src/merge/merge-step';

/**
 * In-memory merge state: the reference implementation of what the Postgres repository
 * stores, used by the property tests to drive `planMerge` exactly as the consumer does.
 */
export class MemoryMergeState implements MergeStateReader {
  readonly sources = new Map<string, SourceContact>();
  readonly members = new Map<string, string>();
  readonly keys = new Map<string, MergeKey[]>();
  readonly audiences = new Map<string, AudienceContact>();
  readonly aliases = new Map<string, string>();
  private seq = 0;

  upsert(dataSourceId: string, userId: string, patch: Record<string, AttributeValue | null>, at: string): string {
    const ref = contactRef({ dataSourceId, userId });
    const current = this.sources.get(ref) ?? { dataSourceId, userId, attributes: {}, attributeAt: {}, seq: ++this.seq };
    const attributes = dict(current.attributes);
    const attributeAt = dict(current.attributeAt);
    for (const [name, value] of Object.entries(patch)) {
      if (value === null) {
        delete attributes[name];
        delete attributeAt[name];
      } else {
        attributes[name] = value;
        attributeAt[name] = at;
      }
    }
    this.sources.set(ref, { ...current, attributes, attributeAt });
    return ref;
  }

  remove(dataSourceId: string, userId: string): string {
    const ref = contactRef({ dataSourceId, userId });
    this.sources.delete(ref);
    return ref;
  }

  async liveContacts(refs: readonly string[]): Promise<SourceContact[]> {
    return refs.flatMap((r) => (this.sources.has(r) ? [this.sources.get(r)!] : []));
  }

  async refsWithKeys(keys: readonly MergeKey[], limit: number): Promise<{ refs: string[]; hot: MergeKey[] }> {
    const refs = new Set<string>();
    const hot: MergeKey[] = [];
    for (const key of keys) {
      const holders = this.holdersOf(key);
      if (holders.length > limit) hot.push(key);
      else holders.forEach((r) => refs.add(r));
    }
    return { refs: [...refs], hot };
  }

  async holderCounts(keys: ReadonlyArray<{ key: MergeKey; upTo: number }>): Promise<Map<string, number>> {
    return new Map(keys.map(({ key, upTo }) => [keyString(key), Math.min(upTo, this.holdersOf(key).length)]));
  }

  private holdersOf(key: MergeKey): string[] {
    return [...this.keys].filter(([, ks]) => ks.some((k) => keyString(k) === keyString(key))).map(([r]) => r);
  }

  async keysOfRefs(refs: readonly string[]): Promise<Map<string, MergeKey[]>> {
    return new Map(refs.map((r) => [r, this.keys.get(r) ?? []]));
  }

  async assignments(refs: readonly string[]): Promise<Map<string, string>> {
    return new Map(refs.flatMap((r) => (this.members.has(r) ? [[r, this.members.get(r)!] as const] : [])));
  }

  async membersOf(audienceIds: readonly string[]): Promise<string[]> {
    const ids = new Set(audienceIds);
    return [...this.members].filter(([, id]) => ids.has(id)).map(([r]) => r);
  }

  /** What the repository writes for a plan. */
  apply(plan: MergePlan): void {
    for (const ref of plan.refs) {
      this.members.delete(ref);
      this.keys.delete(ref);
    }
    for (const id of new Set(plan.previous.values())) this.audiences.delete(id);
    for (const a of plan.result.audiences) this.audiences.set(a.id, a);
    for (const [ref, id] of plan.result.assignment) this.members.set(ref, id);
    for (const [ref, ks] of plan.keys) this.keys.set(ref, ks);
    for (const [absorbed, survivor] of plan.result.absorbed) {
      this.aliases.set(absorbed, survivor);
      for (const [a, s] of this.aliases) if (s === absorbed) this.aliases.set(a, survivor);
    }
  }

  /** The audience id an id resolves to (itself, or the survivor it was absorbed into). */
  resolve(id: string): string | undefined {
    if (this.audiences.has(id)) return id;
    const survivor = this.aliases.get(id);
    return survivor && this.audiences.has(survivor) ? survivor : undefined;
  }
}

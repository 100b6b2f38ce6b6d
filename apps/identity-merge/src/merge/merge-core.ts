import { dict, linkedRef } from '@meld/contracts';
import { KeyNormaliser, keyString, type KeyOptions } from './merge-keys';

/**
 * The merge core: a pure function from the live source contacts of (part of) a project to
 * its audience contacts. No I/O, no clock, no randomness (new ids come from the caller),
 * so the same input always gives the same output whatever order the contacts come in.
 */

export type AttributeValue = string | number | boolean | Array<string | number | boolean>;

export interface SourceContact {
  dataSourceId: string;
  userId: string;
  attributes: Readonly<Record<string, AttributeValue>>;
  /** Per attribute, the ISO time of the write that set it. */
  attributeAt: Readonly<Record<string, string>>;
  /**
   * Arrival order of the contact in the project (smaller = older). It decides which
   * audience id a component keeps and, under the cap, which contacts are absorbed first.
   */
  seq: number;
}

export interface DataSourceInfo {
  id: string;
  /** Higher wins between two non-ingest sources. */
  priority: number;
  /** The ingest/API source: wins every collision. */
  isIngest: boolean;
  /** The `meld-messaging` source: its `@member:` user ids link to another source contact (ADR 0362). */
  links?: boolean;
}

export interface MergeOptions extends KeyOptions {
  /** Most source contacts one audience contact absorbs (default 100). */
  cap?: number;
  /** A key value more live source contacts carry than this merges none of them (default 500, ADR 0350). */
  hotKeyLimit?: number;
  /**
   * The hot keys (`keyString`) of the whole project, when the input is only a region of it
   * (a merge step counts their holders in Postgres); otherwise counted on the input.
   */
  hotKeys?: ReadonlySet<string>;
}

export const DEFAULT_CAP = 100;
export const DEFAULT_HOT_KEY_LIMIT = 500;

/**
 * Keys carried by more than `limit` of the contacts: a switchboard number, a shared mailbox, a
 * form's placeholder that is not on the junk list. They identify nobody, so they merge nobody
 * (ADR 0350); counting them is what keeps a step from reading every holder of such a value.
 */
export function hotKeysOf(contacts: readonly SourceContact[], normaliser: KeyNormaliser, limit: number): Set<string> {
  const holders = new Map<string, number>();
  for (const c of contacts) for (const k of normaliser.keysOf(c.userId, c.attributes, c.dataSourceId)) holders.set(keyString(k), (holders.get(keyString(k)) ?? 0) + 1);
  return new Set([...holders].filter(([, n]) => n > limit).map(([k]) => k));
}

export interface AudienceContact {
  id: string;
  attributes: Record<string, AttributeValue>;
  /** Per attribute, the data source that supplied the value. */
  lineage: Record<string, string>;
  dataSources: string[];
  /** `<dataSourceId>/<userId>` of every member, sorted. */
  dsContactIds: string[];
  /** Members as refs, in seq order (oldest first). */
  members: string[];
}

export interface CapEvent {
  /** The contact that was not absorbed. */
  contact: string;
  /** The audience it would have joined (by its oldest member ref). */
  into: string;
  reason: string;
}

export interface MergeResult {
  audiences: AudienceContact[];
  /** Source contact ref → audience id. */
  assignment: Map<string, string>;
  /** Absorbed audience id → the id of the survivor. */
  absorbed: Map<string, string>;
  /** Previous audience ids with no member left at all. */
  removed: string[];
  capEvents: CapEvent[];
}

/** `<dataSourceId>/<userId>`: the ref of a source contact (also `_ds_contact_ids` entries). */
export function contactRef(c: { dataSourceId: string; userId: string }): string {
  return `${c.dataSourceId}/${c.userId}`;
}

function compareContacts(a: SourceContact, b: SourceContact): number {
  if (a.seq !== b.seq) return a.seq - b.seq;
  const ra = contactRef(a);
  const rb = contactRef(b);
  return ra < rb ? -1 : ra > rb ? 1 : 0;
}

interface Group {
  members: SourceContact[];
  /** Index of the oldest member in the canonical order (groups are compared by it). */
  first: number;
  parent: Group | null;
}

function root(g: Group): Group {
  let r = g;
  while (r.parent) r = r.parent;
  // Path compression.
  let n = g;
  while (n.parent && n.parent !== r) {
    const next: Group = n.parent;
    n.parent = r;
    n = next;
  }
  return r;
}

/**
 * Connected components of the contacts over shared merge keys (hot keys left out, ADR 0350), built greedily in canonical
 * order (seq, then ref) so the result is a function of the set, not of the array order.
 * Without the cap this is exactly the connected components. With it, a contact joins the
 * oldest reachable group with room, and further groups are joined while the total stays
 * within the cap; what does not fit is recorded in `capEvents`.
 */
function components(contacts: SourceContact[], normaliser: KeyNormaliser, cap: number, hot: ReadonlySet<string>, capEvents: CapEvent[]): SourceContact[][] {
  const ordered = [...contacts].sort(compareContacts);
  const owners = new Map<string, Group[]>();
  const groups: Group[] = [];
  ordered.forEach((contact, index) => {
    const keys = normaliser
      .keysOf(contact.userId, contact.attributes, contact.dataSourceId)
      .map(keyString)
      .filter((k) => !hot.has(k));
    const reachable = new Set<Group>();
    for (const k of keys) for (const g of owners.get(k) ?? []) reachable.add(root(g));
    const candidates = [...reachable].sort((a, b) => a.first - b.first);
    let home: Group | undefined;
    for (const g of candidates) {
      if (!home) {
        if (g.members.length + 1 <= cap) {
          home = g;
          home.members.push(contact);
        } else {
          capEvents.push({ contact: contactRef(contact), into: contactRef(g.members[0]), reason: `audience contact has ${g.members.length} source contacts (cap ${cap})` });
        }
        continue;
      }
      if (home.members.length + g.members.length <= cap) {
        home.members.push(...g.members);
        g.members = [];
        g.parent = home;
      } else {
        capEvents.push({
          contact: contactRef(g.members[0]),
          into: contactRef(home.members[0]),
          reason: `joining would make ${home.members.length + g.members.length} source contacts (cap ${cap})`,
        });
      }
    }
    if (!home) {
      home = { members: [contact], first: index, parent: null };
      groups.push(home);
    }
    for (const k of keys) {
      const list = owners.get(k);
      if (!list) owners.set(k, [home]);
      else if (!list.some((g) => root(g) === home)) list.push(home);
    }
  });
  return groups.filter((g) => !g.parent).map((g) => [...g.members].sort(compareContacts));
}

/** True when candidate `a` beats the current winner `b` for one attribute. */
function wins(a: { source: DataSourceInfo; at: number; ref: string }, b: { source: DataSourceInfo; at: number; ref: string }): boolean {
  if (a.source.isIngest !== b.source.isIngest) return a.source.isIngest;
  if (a.source.priority !== b.source.priority) return a.source.priority > b.source.priority;
  if (a.at !== b.at) return a.at > b.at;
  return a.ref < b.ref; // Deterministic last resort.
}

function parseTime(iso: string | undefined): number {
  const t = iso === undefined ? NaN : Date.parse(iso);
  return Number.isNaN(t) ? 0 : t;
}

const UNKNOWN_SOURCE: Omit<DataSourceInfo, 'id'> = { priority: 0, isIngest: false };

/** Attribute values, lineage and references of one component. */
export function mergeAttributes(members: readonly SourceContact[], sources: ReadonlyMap<string, DataSourceInfo>): Pick<AudienceContact, 'attributes' | 'lineage' | 'dataSources' | 'dsContactIds'> {
  const best = new Map<string, { value: AttributeValue; source: DataSourceInfo; at: number; ref: string }>();
  for (const m of members) {
    const source = sources.get(m.dataSourceId) ?? { id: m.dataSourceId, ...UNKNOWN_SOURCE };
    const ref = contactRef(m);
    // A messaging contact linked to a junk-id member (ADR 0362) does not stand for its `_user_id`.
    const linked = source.links === true && linkedRef(m.userId) !== null;
    const values: Record<string, AttributeValue | undefined> = { ...m.attributes, _user_id: m.attributes._user_id ?? (linked ? undefined : m.userId) };
    for (const [name, value] of Object.entries(values)) {
      if (value === null || value === undefined) continue;
      const candidate = { value, source, at: parseTime(Object.hasOwn(m.attributeAt, name) ? m.attributeAt[name] : undefined), ref };
      const current = best.get(name);
      if (!current || wins(candidate, current)) best.set(name, candidate);
    }
  }
  const attributes: Record<string, AttributeValue> = dict();
  const lineage: Record<string, string> = dict();
  for (const name of [...best.keys()].sort()) {
    const b = best.get(name)!;
    attributes[name] = b.value;
    lineage[name] = b.source.id;
  }
  return {
    attributes,
    lineage,
    dataSources: [...new Set(members.map((m) => m.dataSourceId))].sort(),
    dsContactIds: members.map(contactRef).sort(),
  };
}

/**
 * The audience contact's `_phone_mobile` in E.164 wherever it parses with the project's country,
 * each value of a list too; a value that does not parse stays as sent. Contact search by
 * phone, a direct SMS to a phone and a STOP from a phone all find the contact by its E.164
 * number, also in a project that does not merge on the phone (which has no phone merge key).
 * The source contacts keep what their sources sent (ADR 0327).
 */
function withE164Mobile(attributes: Record<string, AttributeValue>, normaliser: KeyNormaliser): Record<string, AttributeValue> {
  if (!Object.hasOwn(attributes, '_phone_mobile')) return attributes;
  const e164 = (v: string | number | boolean) => (typeof v === 'string' ? (normaliser.phone(v) ?? v) : v);
  const value = attributes._phone_mobile!;
  attributes._phone_mobile = Array.isArray(value) ? value.map(e164) : e164(value);
  return attributes;
}

/**
 * Audience contacts of the given source contacts.
 *
 * `previous` maps a source contact ref to the audience id it had. A component keeps the
 * id of its oldest member that had one and whose id no older component claimed already
 * (so on a split the part with the oldest member keeps the id, the other part continues
 * under another member's id or a new one). Previous ids present in a component but not
 * kept are absorbed into it; previous ids that no live member carries are removed.
 * `newId(oldestMemberRef)` names a component none of whose members had a free id.
 */
export function computeAudience(
  contacts: readonly SourceContact[],
  sources: ReadonlyMap<string, DataSourceInfo>,
  options: MergeOptions,
  previous: ReadonlyMap<string, string>,
  newId: (oldestMemberRef: string) => string,
): MergeResult {
  const normaliser = new KeyNormaliser(options);
  const capEvents: CapEvent[] = [];
  const hot = options.hotKeys ?? hotKeysOf(contacts, normaliser, options.hotKeyLimit ?? DEFAULT_HOT_KEY_LIMIT);
  const comps = components([...contacts], normaliser, options.cap ?? DEFAULT_CAP, hot, capEvents);
  // Components in the order of their oldest member, so id claims are deterministic.
  comps.sort((a, b) => compareContacts(a[0], b[0]));
  const claimed = new Set<string>();
  const audiences: AudienceContact[] = [];
  const assignment = new Map<string, string>();
  const absorbed = new Map<string, string>();
  const pendingAbsorbed: Array<{ prev: string; audience: AudienceContact; member: SourceContact }> = [];
  for (const members of comps) {
    let id: string | undefined;
    for (const m of members) {
      const prev = previous.get(contactRef(m));
      if (prev !== undefined && !claimed.has(prev)) {
        id = prev;
        break;
      }
    }
    id ??= newId(contactRef(members[0]));
    claimed.add(id);
    const merged = mergeAttributes(members, sources);
    const audience: AudienceContact = { id, ...merged, attributes: withE164Mobile(merged.attributes, normaliser), members: members.map(contactRef) };
    audiences.push(audience);
    for (const m of members) {
      const ref = contactRef(m);
      assignment.set(ref, id);
      const prev = previous.get(ref);
      if (prev !== undefined && prev !== id) pendingAbsorbed.push({ prev, audience, member: m });
    }
  }
  // A previous id that no component kept but whose members live on was absorbed; when its
  // members went to several components the survivor is the one holding its oldest member.
  pendingAbsorbed.sort((a, b) => compareContacts(a.member, b.member));
  for (const { prev, audience } of pendingAbsorbed) {
    if (!claimed.has(prev) && !absorbed.has(prev)) absorbed.set(prev, audience.id);
  }
  const live = new Set<string>([...claimed, ...absorbed.keys()]);
  const removed = [...new Set(previous.values())].filter((id) => !live.has(id)).sort();
  return { audiences, assignment, absorbed, removed, capEvents };
}

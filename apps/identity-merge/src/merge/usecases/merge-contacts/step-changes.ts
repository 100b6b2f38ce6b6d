import type { AudienceChange } from '@meld/contracts';
import { consentChanges, type ConsentChange } from '../../merge-consent';
import type { AudienceContact } from '../../merge-core';
import type { MergePlan } from '../../merge-step';
import type { StoredAudience } from '../../merge.repository';
import { splitRef } from '../../pg-merge-state';
import { createdTimes } from './created-at';

/** JSON with object keys sorted: jsonb does not keep key order, so compare this way. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

function sameContent(a: AudienceContact, b: StoredAudience): boolean {
  return canonicalJson([a.attributes, a.lineage, a.dataSources, a.dsContactIds]) === canonicalJson([b.attributes, b.lineage, b.datasources, b.ds_contact_ids]);
}

/** Previous members of each audience id the step touched (every one of them is in the region). */
function previousMembers(plan: MergePlan): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [ref, id] of plan.previous) out.set(id, [...(out.get(id) ?? []), ref]);
  return out;
}

/**
 * The data source a cleared consent of each audience contact is attributed to: that of the
 * first changed contact (in message order) that belongs or belonged to it; in a one-contact
 * step, that contact's.
 */
function stepSources(changed: readonly string[], plan: MergePlan): { of: (audienceId: string) => string } {
  const byAudience = new Map<string, string>();
  for (const ref of changed) {
    for (const id of [plan.result.assignment.get(ref), plan.previous.get(ref)]) {
      if (id !== undefined && !byAudience.has(id)) byAudience.set(id, splitRef(ref).dataSourceId);
    }
  }
  const fallback = splitRef(changed[0]).dataSourceId;
  return { of: (id) => byAudience.get(id) ?? fallback };
}

export interface StepChanges {
  /** Audience contacts whose content or `_created_at` changed, with their new version. */
  writes: Array<{ audience: AudienceContact; version: number; createdAt: string }>;
  /** When the merge first wrote each live member (ISO), for its member row. */
  memberFirstAt: Map<string, string>;
  consent: ConsentChange[];
  /** The step's `meld.audience.v1` messages, in the order they must be published. */
  messages: AudienceChange[];
}

/**
 * What a planned step changes against the stored audience contacts: only what changed is
 * written and announced, each change one version up.
 */
export function stepChanges(input: {
  projectId: string;
  plan: MergePlan;
  stored: ReadonlyMap<string, StoredAudience>;
  changed: readonly string[];
  at: string;
  /** A member row's `first_at`, null for a new member or a row written before it was kept. */
  firstAt: (ref: string) => Date | null;
}): StepChanges {
  const { projectId, plan, stored, changed, at } = input;
  const created = createdTimes({ plan, stored, firstAt: input.firstAt, at });
  const lastVersion = (id: string) => Number(stored.get(id)?.version ?? 0);
  const before = previousMembers(plan);
  /** Members an id had before the step and no longer has (for consumers of the membership). */
  const removedFrom = (id: string) => (before.get(id) ?? []).filter((r) => plan.result.assignment.get(r) !== id).sort();
  const tombstone = (id: string): AudienceChange => ({ schemaVersion: 1, kind: 'tombstone', projectId, audienceId: id, version: lastVersion(id) + 1, at, removedDsContactIds: removedFrom(id) });

  // Absorbed ids first: each on its own key, so its order against the others is irrelevant.
  // Its tombstone lets one-row-per-id consumers (the ClickHouse snapshot table) drop it
  // without understanding `merge`; the survivor's snapshot of the same step lists its
  // members, whose live membership rows beat these removals (same `at`, live wins).
  const absorbedIds = [...plan.result.absorbed.keys()].sort();
  const messages: AudienceChange[] = absorbedIds.map(tombstone);

  const versions = new Map<string, number>();
  const writes: StepChanges['writes'] = [];
  const consent: ConsentChange[] = [];
  const stepSource = stepSources(changed, plan);
  for (const a of plan.result.audiences) {
    const old = stored.get(a.id);
    const createdAt = created.audiences.get(a.id)!;
    if (old && sameContent(a, old) && old.created_at.getTime() === Date.parse(createdAt)) {
      versions.set(a.id, Number(old.version));
      continue;
    }
    const version = old ? Number(old.version) + 1 : 1;
    versions.set(a.id, version);
    writes.push({ audience: a, version, createdAt });
    messages.push({
      schemaVersion: 1,
      kind: 'snapshot',
      projectId,
      audienceId: a.id,
      version,
      at,
      attributes: a.attributes,
      dataSources: a.dataSources,
      dsContactIds: a.dsContactIds,
      removedDsContactIds: removedFrom(a.id),
      // The `_created_at` the audience filters read: the earliest of the merged contacts' (created-at.ts).
      createdAt,
    });
    consent.push(...consentChanges(a, old, plan.contacts, stepSource.of(a.id)));
  }

  const absorbedBySurvivor = new Map<string, string[]>();
  for (const id of absorbedIds) {
    const survivor = plan.result.absorbed.get(id)!;
    absorbedBySurvivor.set(survivor, [...(absorbedBySurvivor.get(survivor) ?? []), id]);
  }
  for (const [survivor, ids] of absorbedBySurvivor) {
    messages.push({ schemaVersion: 1, kind: 'merge', projectId, audienceId: survivor, version: versions.get(survivor) ?? 1, at, absorbedIds: ids });
  }
  messages.push(...plan.result.removed.map(tombstone));
  return { writes, memberFirstAt: created.members, consent, messages };
}

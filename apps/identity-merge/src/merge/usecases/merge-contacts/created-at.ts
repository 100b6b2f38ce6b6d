import type { MergePlan } from '../../merge-step';
import type { StoredAudience } from '../../merge.repository';

export interface CreatedTimes {
  /** `_created_at` of each audience contact of the step's result, by id (ISO). */
  audiences: Map<string, string>;
  /** When the merge first wrote each live member (ISO): what its member row keeps. */
  members: Map<string, string>;
}

/**
 * The `_created_at` of the audience contacts a step leaves (ADR 0353): the earliest of
 * - its own, when it keeps an id it had (an id never gets younger),
 * - those of the contacts it absorbs (as PostHog keeps the earliest when persons merge),
 * - the first merge of each of its members: a source contact that leaves a merged contact takes
 *   its own time along, neither the split's nor that of the contact it leaves.
 * A member's first merge is its row's `first_at`; a row written before that column has none and
 * counts from the contact it belongs to; a new member from the step's time.
 */
export function createdTimes(input: { plan: MergePlan; stored: ReadonlyMap<string, StoredAudience>; firstAt: (ref: string) => Date | null; at: string }): CreatedTimes {
  const { plan, stored, firstAt, at } = input;
  const storedAt = (id: string | undefined) => (id === undefined ? undefined : stored.get(id)?.created_at);
  const members = new Map<string, string>();
  for (const ref of plan.result.assignment.keys()) {
    members.set(ref, (firstAt(ref) ?? storedAt(plan.previous.get(ref)))?.toISOString() ?? at);
  }
  const absorbedInto = new Map<string, string[]>();
  for (const [absorbed, survivor] of plan.result.absorbed) absorbedInto.set(survivor, [...(absorbedInto.get(survivor) ?? []), absorbed]);
  const audiences = new Map<string, string>();
  for (const a of plan.result.audiences) {
    const times = [
      ...[a.id, ...(absorbedInto.get(a.id) ?? [])].flatMap((id) => storedAt(id)?.toISOString() ?? []),
      ...a.members.map((ref) => members.get(ref) ?? at),
    ];
    audiences.set(a.id, times.reduce(earliest, at));
  }
  return { audiences, members };
}

/** ISO times compared as instants (their texts may differ in precision). */
function earliest(a: string, b: string): string {
  return Date.parse(b) < Date.parse(a) ? b : a;
}

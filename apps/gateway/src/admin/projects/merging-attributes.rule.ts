import type { AttributeSpec } from '@meld/contracts';
import { fieldError } from '../http/field-error';

type Candidate = Pick<AttributeSpec, 'uid' | 'unique' | 'multivalue'>;

/**
 * Merging attributes must be unique-capable attributes of the project (unique, single-valued),
 * each listed once. `_user_id` always merges, so naming it is allowed and changes nothing.
 * Returns the list to store (without `_user_id`), or throws a 400 naming the bad entry.
 */
export function checkMergingAttributes(requested: readonly string[], catalogue: readonly Candidate[]): string[] {
  const byUid = new Map(catalogue.map((a) => [a.uid, a]));
  const capable = catalogue.filter((a) => a.unique && !a.multivalue).map((a) => a.uid);
  const seen = new Set<string>();
  requested.forEach((uid, i) => {
    const path = `mergingAttributes[${i}]`;
    if (seen.has(uid)) throw fieldError(path, `"${uid}" is listed twice`);
    seen.add(uid);
    const attribute = byUid.get(uid);
    if (!attribute) throw fieldError(path, `unknown attribute "${uid}"`);
    if (!attribute.unique || attribute.multivalue) throw fieldError(path, `"${uid}" cannot merge contacts (unique-capable: ${capable.join(', ')})`);
  });
  return requested.filter((uid) => uid !== '_user_id');
}

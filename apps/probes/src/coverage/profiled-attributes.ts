import { RESERVED_ATTRIBUTES, type AttributeSpec, type AttributeType } from '@meld/contracts';

/** Most attributes one coverage call profiles; the rest are named in `truncated` (ADR 0163). */
export const MAX_PROFILED_ATTRIBUTES = 50;

/** A catalogue attribute with its ClickHouse slot (ClickHouse migration 0005). */
export interface CatalogueAttribute extends AttributeSpec {
  slot: number | null;
}

export interface ProfiledAttribute extends CatalogueAttribute {
  /** Named in the request's `attributes` (overrides the name-based rule of top values, probe rule 4). */
  named: boolean;
  /** Identifies a person: a merging or unique attribute, or a reserved identity (probe rules 4 and 7). */
  identity: boolean;
}

/** Every type of the catalogue can be measured (fill rate, distinct values); a new type must be added here knowingly. */
const MEASURABLE_TYPES: ReadonlySet<AttributeType> = new Set(['string', 'number', 'boolean', 'date', 'datetime', 'email', 'phone']);
const RESERVED_IDENTITIES = new Set(RESERVED_ATTRIBUTES.filter((a) => a.unique).map((a) => a.uid));

export interface Selection {
  attributes: ProfiledAttribute[];
  /** Attributes that qualified but exceeded the cap, in catalogue order. */
  leftOut: string[];
}

/**
 * Which attributes a coverage call profiles (probe rule 4). Without `requested`: the enabled,
 * visible, non-internal attributes of a measurable type, identity attributes left out. With it:
 * exactly those, in the order given (duplicates once). Unknown names are the caller's to refuse
 * (see `unknownAttributes`).
 */
export function selectAttributes(catalogue: readonly CatalogueAttribute[], mergingAttributes: readonly string[], requested?: readonly string[]): Selection {
  const merging = new Set(mergingAttributes);
  const isIdentity = (a: CatalogueAttribute) => a.unique || merging.has(a.uid) || RESERVED_IDENTITIES.has(a.uid);
  let chosen: ProfiledAttribute[];
  if (requested) {
    const byUid = new Map(catalogue.map((a) => [a.uid, a]));
    chosen = [...new Set(requested)].filter((uid) => byUid.has(uid)).map((uid) => ({ ...byUid.get(uid)!, named: true, identity: isIdentity(byUid.get(uid)!) }));
  } else {
    chosen = catalogue
      .filter((a) => a.enabled && a.visible && !a.internal && MEASURABLE_TYPES.has(a.type) && !isIdentity(a))
      .map((a) => ({ ...a, named: false, identity: false }));
  }
  return { attributes: chosen.slice(0, MAX_PROFILED_ATTRIBUTES), leftOut: chosen.slice(MAX_PROFILED_ATTRIBUTES).map((a) => a.uid) };
}

/** Positions and names in `requested` that the catalogue does not have. */
export function unknownAttributes(catalogue: readonly CatalogueAttribute[], requested: readonly string[]): Array<{ index: number; uid: string }> {
  const known = new Set(catalogue.map((a) => a.uid));
  return requested.flatMap((uid, index) => (known.has(uid) ? [] : [{ index, uid }]));
}

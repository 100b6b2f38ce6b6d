import { ATTRIBUTE_SLOTS, slotColumn, slotKindOf, slotMaskColumn, type SlotKind } from '@meld/contracts';
import type { FilterCatalogue } from './types';

type CatalogueAttribute = FilterCatalogue['attributes'][number];

/** Where a slotted attribute lives in audience_contacts (migration 0005). */
export interface AttributeSlot {
  kind: SlotKind;
  index: number;
}

/** The arrays of an audience_contacts row (migration 0003) that slot columns are taken from. */
export interface AttributeArrays {
  str_keys: readonly string[];
  str_values: readonly string[];
  num_keys: readonly string[];
  num_values: readonly number[];
}

/**
 * The slot of a single-valued attribute, if it has one. Its column name enters SQL unescaped,
 * so only an integer slot within the migration's range counts.
 */
export function slotOf(attribute: CatalogueAttribute): AttributeSlot | undefined {
  const { slot } = attribute;
  if (attribute.multivalue || typeof slot !== 'number' || !Number.isInteger(slot) || slot < 0 || slot >= ATTRIBUTE_SLOTS) return undefined;
  return { kind: slotKindOf(attribute.type), index: slot };
}

/**
 * The slot columns of a row, for its writer (the probes audience sink): each slotted attribute's
 * first value in the arrays of its kind, the value the array form of a single-valued condition
 * reads (`values[indexOf(keys, key)]`), so both forms of a filter give the same answer, and the
 * presence bitmasks `str_slots` / `num_slots`. A slot without a value is left out (its default).
 */
export function slotValues(row: AttributeArrays, attributes: readonly CatalogueAttribute[]): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  const masks = { str: 0, num: 0 };
  for (const attribute of attributes) {
    const slot = slotOf(attribute);
    if (!slot) continue;
    const [keys, values] = slot.kind === 'str' ? [row.str_keys, row.str_values] : [row.num_keys, row.num_values];
    const i = keys.indexOf(attribute.uid);
    if (i < 0) continue;
    out[slotColumn(slot.kind, slot.index)] = values[i];
    // >>> 0: bit 31 keeps the mask a UInt32 (JavaScript's | is signed).
    masks[slot.kind] = (masks[slot.kind] | (1 << slot.index)) >>> 0;
  }
  if (masks.str) out[slotMaskColumn('str')] = masks.str;
  if (masks.num) out[slotMaskColumn('num')] = masks.num;
  return out;
}

import { ATTRIBUTE_SLOTS, slotColumn, slotKindOf } from '@meld/contracts';
import type { FilterCatalogue } from './types';

type CatalogueAttribute = FilterCatalogue['attributes'][number];

/** The arrays of an audience_contacts row (migration 0003) that slot columns are taken from. */
export interface AttributeArrays {
  str_keys: readonly string[];
  str_values: readonly string[];
  num_keys: readonly string[];
  num_values: readonly number[];
}

/**
 * The slot column of a single-valued attribute (`s3`, `n0`, migration 0005), if it has one. The
 * name enters SQL unescaped, so only an integer slot within the migration's range counts.
 */
export function slotColumnOf(attribute: CatalogueAttribute): string | undefined {
  const { slot } = attribute;
  if (attribute.multivalue || typeof slot !== 'number' || !Number.isInteger(slot) || slot < 0 || slot >= ATTRIBUTE_SLOTS) return undefined;
  return slotColumn(slotKindOf(attribute.type), slot);
}

/**
 * The slot columns of a row, for its writer (the probes audience sink): each slotted attribute's
 * first value in the arrays of its kind, the value the array form of a single-valued condition
 * reads (`values[indexOf(keys, key)]`), so both forms of a filter give the same answer. An
 * attribute without a value there is left out (the column's NULL).
 */
export function slotValues(row: AttributeArrays, attributes: readonly CatalogueAttribute[]): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const attribute of attributes) {
    const column = slotColumnOf(attribute);
    if (!column) continue;
    if (slotKindOf(attribute.type) === 'str') {
      const i = row.str_keys.indexOf(attribute.uid);
      if (i >= 0) out[column] = row.str_values[i];
    } else {
      const i = row.num_keys.indexOf(attribute.uid);
      if (i >= 0) out[column] = row.num_values[i];
    }
  }
  return out;
}

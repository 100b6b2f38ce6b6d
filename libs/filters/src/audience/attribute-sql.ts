import { raw, sql, type Sql } from '@meld/clickhouse';
import { slotColumn, slotMaskColumn } from '@meld/contracts';
import { slotOf } from './slots';
import type { AudienceValueKind, CatalogueType, FilterCatalogue } from './types';

/** What locates an attribute's values in an audience_contacts row. */
export interface StoredAttribute {
  key: string;
  valueKind: AudienceValueKind;
  multivalue: boolean;
  /** Its slot column (single-valued attributes only), if it has one. */
  slot?: { kind: 'str' | 'num'; index: number };
}

export interface AttributeSql {
  /** The contact has at least one value. */
  present: Sql;
  /** Single-valued: the value (the kind's default, '' or 0, when absent). */
  value: Sql;
  /** Every value, as an array of the kind's type (one entry for a single-valued attribute that is present). */
  values: Sql;
}

/**
 * SQL reading an attribute from an audience_contacts row (migrations 0003 and 0005): a slotted
 * single-valued attribute from its own column and its presence from a bit of the kind's mask, the
 * others from the key/value arrays. The filter compiler and the coverage probe both read through
 * this, so a count and a profile always see the same values.
 */
export function attributeSql(attribute: StoredAttribute): AttributeSql {
  const [keys, values] = attribute.valueKind === 'string' ? [raw('str_keys'), raw('str_values')] : [raw('num_keys'), raw('num_values')];
  const slot = attribute.slot && !attribute.multivalue ? attribute.slot : undefined;
  const all = sql`arrayFilter((x, k) -> k = ${attribute.key}, ${values}, ${keys})`;
  if (slot) {
    const present = sql`bitAnd(${raw(slotMaskColumn(slot.kind))}, ${2 ** slot.index}) != 0`;
    const column = raw(slotColumn(slot.kind, slot.index));
    return { present, value: column, values: sql`if(${present}, [${column}], arrayResize([${column}], 0))` };
  }
  const present = sql`has(${keys}, ${attribute.key})`;
  return { present, value: sql`${values}[indexOf(${keys}, ${attribute.key})]`, values: attribute.multivalue ? all : sql`arraySlice(${all}, 1, 1)` };
}

/** How a catalogue type's values compare and where they are stored (emails and phones are strings). */
export const valueKindOf = (type: CatalogueType): AudienceValueKind =>
  type === 'string' || type === 'email' || type === 'phone' ? 'string' : type === 'boolean' ? 'boolean' : type === 'number' ? 'number' : 'date';

/** The SQL of a catalogue attribute's values (its slot column when it has one). */
export function catalogueAttributeSql(attribute: FilterCatalogue['attributes'][number]): AttributeSql {
  return attributeSql({ key: attribute.uid, valueKind: valueKindOf(attribute.type), multivalue: attribute.multivalue, slot: slotOf(attribute) });
}

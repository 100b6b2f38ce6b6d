import type { AttributeType } from './reserved-attributes';

/**
 * Attribute slots: a single-valued project attribute's own column in ClickHouse
 * `audience_contacts`, `s<slot>` (String) or `n<slot>` (Float64), holding the value its key/value
 * arrays hold first, with bit <slot> of `str_slots` / `num_slots` set when there is one (else
 * the column holds '' or 0). Postgres gives `attributes.slot`
 * (trigger of migration 1795268000000), ClickHouse migration 0005 has the columns; both are
 * sized by this constant (apps/probes/test/attribute-slots.integration-spec.ts checks they agree).
 */
export const ATTRIBUTE_SLOTS = 32;

export type SlotKind = 'str' | 'num';

/** Which arrays (and slot columns) hold an attribute type's values. */
export const slotKindOf = (type: AttributeType): SlotKind => (type === 'string' || type === 'email' || type === 'phone' ? 'str' : 'num');

export const slotColumn = (kind: SlotKind, slot: number): string => `${kind === 'str' ? 's' : 'n'}${slot}`;

/** The UInt32 column whose bit <slot> says the slot holds a value. */
export const slotMaskColumn = (kind: SlotKind): string => `${kind}_slots`;

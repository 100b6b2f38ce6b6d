import { words } from '../shared/names';
import type { ProfiledAttribute } from './profiled-attributes';

/** Reasons top values are withheld (probe rule 7); never "empty": an empty attribute lists no values. */
export const TOP_VALUES_OMITTED = {
  identity: 'identity attribute: its values identify contacts',
  identifier: 'the name reads as an identifier',
  timestamp: 'the name or type reads as a timestamp',
  quantity: 'the name reads as a quantity',
  tooManyDistinct: 'too many distinct values',
  onePerContact: 'about one distinct value per filled contact',
  notMeasured: 'distinct values not measured',
  dataMode: "the project's data mode withholds contact data (blocked), or the caller has no audience data level",
} as const;
export type OmittedReason = (typeof TOP_VALUES_OMITTED)[keyof typeof TOP_VALUES_OMITTED];

/** Above this many distinct values a top-ten list says little and its GROUP BY costs much (ADR 0163). */
export const MAX_DISTINCT_FOR_TOP_VALUES = 10_000;
/** distinct ≥ this share of filled contacts reads as one value per contact (and more than 10 values: a list of ≤ 10 is the whole distribution). */
export const ONE_PER_CONTACT_RATIO = 0.9;

export const IDENTIFIER_WORDS: ReadonlySet<string> = new Set(['id', 'ids', 'uuid', 'guid', 'key', 'token', 'hash', 'ref', 'reference', 'identifier']);
const TIMESTAMP_WORDS = new Set(['at', 'date', 'time', 'timestamp', 'ts', 'datetime', 'on']);
const QUANTITY_WORDS = new Set(['amount', 'price', 'total', 'count', 'qty', 'quantity', 'revenue', 'sum', 'balance', 'spent', 'spend', 'value', 'cost', 'number']);

/**
 * Whether `word` is one of `rule`'s words or its plural: a multivalue `push_tokens` holds tokens
 * as `push_token` does, `item_prices` prices (-s, -es, -ies → -y). A word of three letters or
 * fewer is not read as a plural (`ons` is not `on`s).
 */
function readsAs(word: string, rule: ReadonlySet<string>): boolean {
  if (rule.has(word)) return true;
  if (word.length <= 3 || !word.endsWith('s')) return false;
  return rule.has(word.slice(0, -1)) || (word.endsWith('es') && rule.has(word.slice(0, -2))) || (word.endsWith('ies') && rule.has(`${word.slice(0, -3)}y`));
}

/** The name-based part of rule 7 (a named attribute overrides it: rule 4). */
export function nameReason(attribute: Pick<ProfiledAttribute, 'uid' | 'type'>): OmittedReason | undefined {
  const last = words(attribute.uid).at(-1) ?? '';
  if (readsAs(last, IDENTIFIER_WORDS)) return TOP_VALUES_OMITTED.identifier;
  if (readsAs(last, TIMESTAMP_WORDS) || attribute.type === 'datetime') return TOP_VALUES_OMITTED.timestamp;
  if (readsAs(last, QUANTITY_WORDS)) return TOP_VALUES_OMITTED.quantity;
  return undefined;
}

/** Before anything is measured: identity, then the name (unless named in the request). */
export function reasonBeforeMeasuring(attribute: ProfiledAttribute): OmittedReason | undefined {
  if (attribute.identity) return TOP_VALUES_OMITTED.identity;
  return attribute.named ? undefined : nameReason(attribute);
}

/** Once distinct values (over every contact) and filled contacts (estimated) are known. */
export function reasonAfterMeasuring(distinct: number | undefined, filled: number): OmittedReason | undefined {
  if (distinct === undefined || !Number.isFinite(distinct)) return TOP_VALUES_OMITTED.notMeasured;
  if (distinct > MAX_DISTINCT_FOR_TOP_VALUES) return TOP_VALUES_OMITTED.tooManyDistinct;
  if (distinct > 10 && distinct >= ONE_PER_CONTACT_RATIO * filled) return TOP_VALUES_OMITTED.onePerContact;
  return undefined;
}

/**
 * Every condition, on an attribute or on an event parameter, has one shape:
 *
 *     [NOT] (some value v of the attribute / parameter satisfies `test`)
 *
 * with `test` absent for is-set / is-not-set. That is "multivalue: any value matches" for the
 * positive operators, and makes the two negative operators the exact complement of their
 * positive twin: `not-matches-string` = no value matches (so a contact without the attribute
 * matches it: "city is not Paris" includes contacts with no city), `is-not-set` = no value.
 * Positive operators never match a contact without the attribute.
 *
 * Semantics (ADR 0059):
 *   - string operators are case-insensitive (lowerUTF8 on both sides, in ClickHouse);
 *   - numbers compare as Float64; `between` is inclusive on both ends;
 *   - dates compare in whole unix seconds, UTC. A date value (`YYYY-MM-DD`) stands for its whole
 *     day: `before-date D` is before D's midnight, `after-date D` after D's last second,
 *     `between [D1, D2]` from D1's midnight to D2's last second. A date-time is that instant;
 *   - `in-last-days N` is [now − N days, now]: on a date attribute (stored at UTC midnight)
 *     that is today and the N − 1 days before; future values never match.
 */
import { type AudienceConditionOperator, type AudienceConditionValue, type AudienceValueKind } from './types';
import { DAY_SECONDS, endOf, parseFilterDate, startOf, type FilterDate } from './dates';

export type ValueTest =
  | { kind: 'equals-ci'; values: string[] }
  | { kind: 'contains-ci' | 'starts-ci' | 'ends-ci'; values: string[] }
  | { kind: 'equals-number'; values: number[] }
  /** Inclusive bounds; either may be absent. Strict comparisons are written as strict flags. */
  | { kind: 'range'; min?: number; minStrict?: boolean; max?: number; maxStrict?: boolean }
  | { kind: 'boolean'; value: boolean };

export interface Predicate {
  negated: boolean;
  /** Absent: any value at all (is-set / is-not-set). */
  test?: ValueTest;
}

function date(value: AudienceConditionValue): FilterDate {
  const d = typeof value === 'string' ? parseFilterDate(value) : null;
  // parse.ts has checked every value; reaching this means a hand-built node.
  if (!d) throw new TypeError(`not a filter date: ${String(value)}`);
  return d;
}

const strings = (values: readonly AudienceConditionValue[]): string[] => values.map(String);

/** The predicate of a parsed condition, with `in-last-days` resolved against `now` (unix seconds). */
export function predicateOf(operator: AudienceConditionOperator, values: readonly AudienceConditionValue[], kind: AudienceValueKind, now: number): Predicate {
  switch (operator) {
    case 'is-set':
      return { negated: false };
    case 'is-not-set':
      return { negated: true };
    case 'matches-string':
      return { negated: false, test: { kind: 'equals-ci', values: strings(values) } };
    case 'not-matches-string':
      return { negated: true, test: { kind: 'equals-ci', values: strings(values) } };
    case 'contains-string':
      return { negated: false, test: { kind: 'contains-ci', values: strings(values) } };
    case 'starts-with-string':
      return { negated: false, test: { kind: 'starts-ci', values: strings(values) } };
    case 'ends-with-string':
      return { negated: false, test: { kind: 'ends-ci', values: strings(values) } };
    case 'equals-number':
      return { negated: false, test: { kind: 'equals-number', values: values.map(Number) } };
    case 'greater-than':
      return { negated: false, test: { kind: 'range', min: Number(values[0]), minStrict: true } };
    case 'less-than':
      return { negated: false, test: { kind: 'range', max: Number(values[0]), maxStrict: true } };
    case 'between':
      return kind === 'date'
        ? { negated: false, test: { kind: 'range', min: startOf(date(values[0])), max: endOf(date(values[1])) } }
        : { negated: false, test: { kind: 'range', min: Number(values[0]), max: Number(values[1]) } };
    case 'before-date':
      return { negated: false, test: { kind: 'range', max: startOf(date(values[0])), maxStrict: true } };
    case 'after-date':
      return { negated: false, test: { kind: 'range', min: endOf(date(values[0])), minStrict: true } };
    case 'in-last-days':
      return { negated: false, test: { kind: 'range', min: now - Number(values[0]) * DAY_SECONDS, max: now } };
    case 'is-true':
      return { negated: false, test: { kind: 'boolean', value: true } };
    case 'is-false':
      return { negated: false, test: { kind: 'boolean', value: false } };
  }
}

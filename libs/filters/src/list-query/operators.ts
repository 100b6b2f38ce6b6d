/**
 * The operators of product-api.md "List query filter", and which field types take which.
 * `lt`…`gte` and the ranges are for numbers and dates only (the spec's "Numeric and date"
 * row): on a string they would compare by collation, which nobody means.
 */
export const CONDITION_OPERATORS = [
  'exists',
  'eq',
  'eqi',
  'ne',
  'nei',
  'lt',
  'lte',
  'gt',
  'gte',
  'in',
  'ini',
  'nin',
  'nini',
  'contains',
  'containsi',
  'ncontains',
  'ncontainsi',
  'starts',
  'startsi',
  'ends',
  'endsi',
  'range',
  'between',
  'betweeneq',
] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

export const LOGICAL_OPERATORS = ['and', 'or'] as const;
export type LogicalOperator = (typeof LOGICAL_OPERATORS)[number];

/**
 * `json`: a key under a jsonb column (`attributes*drink`): compared as text, ordered as
 * numbers by `lt`…`betweeneq` (values that are not JSON numbers never match those).
 */
export const FIELD_TYPES = ['string', 'number', 'date', 'boolean', 'json'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/**
 * What the value of an operator is: `flag` true/false (`exists`), `scalar` one value,
 * `list` an array (`|` in the URL form), `scalars` one value or an array (string operators
 * match any of them), `pair` a two-element array.
 */
export type ValueShape = 'flag' | 'scalar' | 'list' | 'scalars' | 'pair';

export const VALUE_SHAPE: Readonly<Record<ConditionOperator, ValueShape>> = {
  exists: 'flag',
  eq: 'scalar',
  eqi: 'scalar',
  ne: 'scalar',
  nei: 'scalar',
  lt: 'scalar',
  lte: 'scalar',
  gt: 'scalar',
  gte: 'scalar',
  in: 'list',
  ini: 'list',
  nin: 'list',
  nini: 'list',
  contains: 'scalars',
  containsi: 'scalars',
  ncontains: 'scalars',
  ncontainsi: 'scalars',
  starts: 'scalars',
  startsi: 'scalars',
  ends: 'scalars',
  endsi: 'scalars',
  range: 'pair',
  between: 'pair',
  betweeneq: 'pair',
};

/** A negative operator is NOT of its positive one, where a missing value does not match the positive. */
export const NEGATION_OF: Readonly<Partial<Record<ConditionOperator, ConditionOperator>>> = {
  ne: 'eq',
  nei: 'eqi',
  nin: 'in',
  nini: 'ini',
  ncontains: 'contains',
  ncontainsi: 'containsi',
};

const STRING_OPERATORS: readonly ConditionOperator[] = ['contains', 'containsi', 'ncontains', 'ncontainsi', 'starts', 'startsi', 'ends', 'endsi'];
const ORDERED_OPERATORS: readonly ConditionOperator[] = ['lt', 'lte', 'gt', 'gte', 'range', 'between', 'betweeneq'];
const CASE_INSENSITIVE: readonly ConditionOperator[] = ['eqi', 'nei', 'ini', 'nini'];

export const OPERATORS_BY_TYPE: Readonly<Record<FieldType, readonly ConditionOperator[]>> = {
  string: ['exists', 'eq', 'ne', ...CASE_INSENSITIVE, 'in', 'nin', ...STRING_OPERATORS],
  number: ['exists', 'eq', 'ne', 'in', 'nin', ...ORDERED_OPERATORS],
  date: ['exists', 'eq', 'ne', ...ORDERED_OPERATORS],
  boolean: ['exists', 'eq', 'ne'],
  json: CONDITION_OPERATORS,
};

export function isConditionOperator(name: string): name is ConditionOperator {
  return (CONDITION_OPERATORS as readonly string[]).includes(name);
}

/** On a `json` field these take numbers; every other operator compares text. */
export function isOrderedOperator(operator: ConditionOperator): boolean {
  return ORDERED_OPERATORS.includes(operator);
}

/** Time buckets of `_group` (UTC), and the `date_trunc` unit each stands for. */
export const GROUP_TOKENS = { hourly: 'hour', daily: 'day', weekly: 'week', monthly: 'month', yearly: 'year' } as const;
export type GroupToken = keyof typeof GROUP_TOKENS;

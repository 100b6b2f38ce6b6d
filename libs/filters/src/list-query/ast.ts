import type { ConditionOperator, GroupToken, LogicalOperator } from './operators';
import type { RelativePeriod } from './values';

/** An absolute instant as the caller wrote it, normalised (`+hh:mm` offset, six fraction digits). */
export interface AbsoluteDate {
  at: string;
}
/** `<amount> <period> ago`, resolved by Postgres (`now()`) when the query runs. */
export interface RelativeDate {
  ago: { amount: number; period: RelativePeriod };
}
export type DateValue = AbsoluteDate | RelativeDate;

export type Scalar = string | number | boolean | DateValue;
export type ConditionValue = Scalar | readonly Scalar[];

/**
 * One condition on a whitelisted field. `field` is the path (`['attributes', 'drink']` for
 * `attributes*drink` or `attributes.drink`); the value is already of the field's type.
 */
export interface ListCondition {
  field: readonly string[];
  operator: ConditionOperator;
  value: ConditionValue;
}

/** `and` / `or` of at least two nodes (single children and same-operator nesting are flattened). */
export interface ListLogical {
  operator: LogicalOperator;
  children: readonly ListFilter[];
}

export type ListFilter = ListCondition | ListLogical;

export interface ListSortKey {
  field: readonly string[];
  direction: 'asc' | 'desc';
}

/**
 * THE query both forms parse into. `paging` is always set (the resource's default when the
 * caller sent none); `sort` is the caller's (the resource's default order and a unique
 * tie-breaker are appended when compiled).
 */
export interface ListQuery {
  filter: ListFilter | null;
  sort: readonly ListSortKey[];
  paging: { start: number; limit: number };
  group: GroupToken | null;
}

export function isLogical(node: ListFilter): node is ListLogical {
  return 'children' in node;
}

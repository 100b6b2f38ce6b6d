import type { LogicalOperator } from './operators';

/**
 * What the two forms read, before any field, operator or value is checked: the URL form
 * and `_q` each produce this, and one validator (parse.ts) turns it into the ListQuery.
 * `at` holds the caller's name of each part, for errors (`name_eqq`, `_q.filter[1].operator`).
 */
export interface RawCondition {
  kind: 'condition';
  field: readonly string[];
  operator: string;
  /** URL form: the text, `|`-lists not yet split; `_q`: the JSON value. */
  value: { text: string } | { json: unknown };
  at: { field: string; operator: string; value: string };
}

export interface RawLogical {
  kind: 'logical';
  operator: LogicalOperator;
  children: readonly RawNode[];
  at: string;
}

export type RawNode = RawCondition | RawLogical;

export interface RawSortKey {
  field: readonly string[];
  direction: 'asc' | 'desc';
  at: string;
}

export interface RawListQuery {
  /** AND of these. */
  filter: readonly RawNode[];
  sort: readonly RawSortKey[];
  paging: { start: number; limit: number; at: { start: string; limit: string } } | null;
  group: { token: string; at: string } | null;
  /** `*` in the URL form, `.` in `_q`: how field names are written back in messages. */
  separator: '*' | '.';
}

/** Most conditions one query may hold, and deepest and/or nesting of `_q`. */
export const MAX_CONDITIONS = 100;
export const MAX_DEPTH = 5;
/** Most values of one list (`in`, `|`-separated). */
export const MAX_LIST_VALUES = 100;
export const MAX_SORT_KEYS = 5;
/** Largest `_start`: nine digits. */
export const MAX_START = 999_999_999;

import type { ListSortKey, Scalar } from './ast';
import type { FieldType } from './operators';

/**
 * A field a listing exposes to filters. `sql` is an expression over the listing's own table
 * aliases, written by us; caller input never reaches SQL text (values and JSON key paths are
 * bound parameters).
 */
export interface ColumnField {
  type: Exclude<FieldType, 'json'>;
  sql: string;
  sortable?: boolean;
  /**
   * For a field of related rows (a sender's countries): wraps a predicate on one related
   * row, e.g. `EXISTS (SELECT 1 FROM sender_countries c WHERE c.sender_id = s.id AND <p>)`.
   * Positive operators then match when any related row does; negative ones when none does.
   */
  any?: (predicate: string) => string;
  /**
   * Equality by other means than `sql`: `eq`, `eqi`, `in` and `ini` (and `ne`, `nei`, `nin`,
   * `nini` as NOT of them) become this predicate on the values given, e.g. an indexed column
   * against the stored values that read as one of them (ADR 0159). It must hold on exactly the
   * rows where `sql` equals one of the values (ignoring case when `ignoreCase`); `bind` binds a
   * value as a parameter. Every other operator, and the sort, still read `sql`.
   */
  equals?: (values: readonly Scalar[], ignoreCase: boolean, bind: (value: unknown, cast: string) => string) => string;
}

/** Any key under a jsonb column: `attributes*drink` (URL) or `attributes.drink` (`_q`). */
export interface JsonField {
  /** The jsonb column. */
  sql: string;
  sortable?: boolean;
}

export interface ListResource {
  /** Plural, for messages ("data sources do not group"). */
  name: string;
  /** By dotted name (`countries.country`). */
  fields: Readonly<Record<string, ColumnField>>;
  /** jsonb columns whose keys are fields, by prefix (`attributes`). */
  json?: Readonly<Record<string, JsonField>>;
  /** Order when the caller gives none, then `tieBreaker` (unique) keeps pages stable. */
  defaultSort: readonly ListSortKey[];
  tieBreaker: string;
  /** Date field `_group` buckets by; a resource without it refuses `_group`. */
  group?: string;
  defaultLimit?: number;
  maxLimit?: number;
}

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 1000;
/** Keys under a jsonb column: attribute-like names (letters, digits, `_ . -`). */
const JSON_KEY = /^[A-Za-z0-9_.-]{1,128}$/;

export interface ResolvedField {
  type: FieldType;
  sql: string;
  sortable: boolean;
  any?: (predicate: string) => string;
  equals?: ColumnField['equals'];
  /** Key path under the jsonb column (json fields only). */
  jsonPath?: readonly string[];
}

/** The field a path names, or null when the resource does not expose it. */
export function resolveField(resource: ListResource, path: readonly string[]): ResolvedField | null {
  const name = path.join('.');
  if (Object.hasOwn(resource.fields, name) && path.every((s) => !s.includes('.'))) {
    const f = resource.fields[name];
    return { type: f.type, sql: f.sql, sortable: f.sortable ?? false, ...(f.any ? { any: f.any } : {}), ...(f.equals ? { equals: f.equals } : {}) };
  }
  const [prefix, ...keys] = path;
  if (resource.json && Object.hasOwn(resource.json, prefix) && keys.length > 0 && keys.length <= 8 && keys.every((k) => JSON_KEY.test(k))) {
    const j = resource.json[prefix];
    return { type: 'json', sql: j.sql, sortable: j.sortable ?? false, jsonPath: keys };
  }
  return null;
}

/** Field names as the caller writes them (`*` in the URL form, `.` in `_q`), for error messages. */
export function fieldNames(resource: ListResource, separator: string, only: (f: { sortable: boolean }) => boolean = () => true): string[] {
  const columns = Object.entries(resource.fields)
    .filter(([, f]) => only({ sortable: f.sortable ?? false }))
    .map(([name]) => name.split('.').join(separator));
  const json = Object.entries(resource.json ?? {})
    .filter(([, f]) => only({ sortable: f.sortable ?? false }))
    .map(([prefix]) => `${prefix}${separator}<key>`);
  return [...columns, ...json];
}

export function limitsOf(resource: ListResource): { defaultLimit: number; maxLimit: number } {
  return { defaultLimit: resource.defaultLimit ?? DEFAULT_LIST_LIMIT, maxLimit: resource.maxLimit ?? MAX_LIST_LIMIT };
}

import { ListQueryError } from './errors';
import { MAX_START, type RawCondition, type RawListQuery, type RawNode, type RawSortKey } from './raw';

/** Parameters with a meaning of their own; every other parameter is a filter. */
export const RESERVED_PARAMETERS = ['_sort', '_start', '_limit', '_group', '_q'] as const;
const FILTER_KEY = /^(.+)_([A-Za-z]+)$/;

/**
 * The URL form: `field_operator=value` filters (different parameters AND, a repeated one OR),
 * `_sort`, `_start` + `_limit`, `_group`. Nested fields use `*`.
 */
export function readUrlForm(params: URLSearchParams): RawListQuery {
  const byKey = new Map<string, string[]>();
  for (const [key, value] of params) byKey.set(key, [...(byKey.get(key) ?? []), value]);
  const once = (key: string) => {
    const values = byKey.get(key);
    if (values && values.length > 1) throw new ListQueryError(key, 'given more than once');
    return values?.[0];
  };
  const filter: RawNode[] = [];
  for (const [key, values] of byKey) {
    if ((RESERVED_PARAMETERS as readonly string[]).includes(key)) continue;
    const conditions = values.map((text) => condition(key, text));
    filter.push(conditions.length === 1 ? conditions[0] : { kind: 'logical', operator: 'or', children: conditions, at: key });
  }
  const group = once('_group');
  return { filter, sort: sortOf(once('_sort')), paging: pagingOf(once('_start'), once('_limit')), group: group === undefined ? null : { token: group, at: '_group' }, separator: '*' };
}

function condition(key: string, text: string): RawCondition {
  const m = FILTER_KEY.exec(key);
  if (!m) throw new ListQueryError(key, key.startsWith('_') ? 'unknown parameter' : 'a filter parameter is <field>_<operator>, e.g. name_eq', key.startsWith('_') ? RESERVED_PARAMETERS : undefined);
  return { kind: 'condition', field: pathOf(m[1], key), operator: m[2], value: { text }, at: { field: key, operator: key, value: key } };
}

function pathOf(field: string, parameter: string): string[] {
  const path = field.split('*');
  if (path.some((s) => s === '')) throw new ListQueryError(parameter, `"${field}" has an empty path segment (nested fields are a*b)`);
  return path;
}

/** `name:-,createdAt:+,priority`: descending with `:-`, ascending with `:+` or nothing. */
function sortOf(text: string | undefined): RawSortKey[] {
  if (text === undefined) return [];
  return text.split(',').map((item) => {
    // `:+` sent unencoded arrives as `: ` (form encoding reads `+` as a space).
    const m = /^\s*(.*?)(?::([+ -]))?\s*$/.exec(item);
    const field = m?.[1] ?? '';
    if (!field) throw new ListQueryError('_sort', `"${item}" is not <field>, <field>:+ or <field>:-`);
    return { field: pathOf(field, '_sort'), direction: m?.[2] === '-' ? 'desc' : 'asc', at: '_sort' };
  });
}

function pagingOf(start: string | undefined, limit: string | undefined): RawListQuery['paging'] {
  if (start === undefined && limit === undefined) return null;
  if (start === undefined) throw new ListQueryError('_start', '_start and _limit go together: send both or neither');
  if (limit === undefined) throw new ListQueryError('_limit', '_start and _limit go together: send both or neither');
  const integer = (text: string, name: string) => {
    if (!/^\d{1,9}$/.test(text) || Number(text) > MAX_START) throw new ListQueryError(name, `"${text}" is not an integer from 0 to ${MAX_START}`);
    return Number(text);
  };
  return { start: integer(start, '_start'), limit: integer(limit, '_limit'), at: { start: '_start', limit: '_limit' } };
}

/**
 * A `|`-separated list of the URL form. `\|` is a literal `|` and `\\` a literal `\`, so
 * any string can be listed; a lone backslash before anything else stays as it is.
 */
export function splitList(text: string): string[] {
  const items: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && (text[i + 1] === '|' || text[i + 1] === '\\')) {
      current += text[++i];
    } else if (c === '|') {
      items.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  items.push(current);
  return items;
}

/** The inverse of splitList, for clients and tests building URL lists. */
export function joinList(items: readonly string[]): string {
  return items.map((s) => s.replace(/\\/g, '\\\\').replace(/\|/g, '\\|')).join('|');
}

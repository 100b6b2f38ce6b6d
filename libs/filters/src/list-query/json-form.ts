import { ListQueryError } from './errors';
import { LOGICAL_OPERATORS, type LogicalOperator } from './operators';
import { MAX_DEPTH, MAX_START, type RawListQuery, type RawNode, type RawSortKey } from './raw';

const QUERY_KEYS = ['filter', 'paging', 'sort', 'group'];
const NODE_KEYS = ['field', 'operator', 'value'];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The `_q` form: {filter: [{field, operator, value}], paging: {start, limit}, sort: [[field,
 * direction]], group}. Conditions of `filter` AND; `{field: "", operator: "and"|"or", value:
 * [conditions]}` combines. Nested fields use `.`.
 */
export function readJsonForm(text: string): RawListQuery {
  let q: unknown;
  try {
    q = JSON.parse(text);
  } catch {
    throw new ListQueryError('_q', 'is not JSON (URL-encode a JSON object)');
  }
  if (!isObject(q)) throw new ListQueryError('_q', 'must be a JSON object', QUERY_KEYS);
  onlyKeys(q, QUERY_KEYS, '_q');
  // Depth counts the and/or nodes around a list: `filter` itself is at 0, so exactly MAX_DEPTH nested and/or pass (ADR 0055).
  const filter = q.filter === undefined ? [] : nodes(q.filter, '_q.filter', 0);
  const group = q.group;
  if (group !== undefined && typeof group !== 'string') throw new ListQueryError('_q.group', 'must be a string');
  return { filter, sort: sortOf(q.sort), paging: pagingOf(q.paging), group: group === undefined ? null : { token: group, at: '_q.group' }, separator: '.' };
}

function onlyKeys(o: Json, allowed: readonly string[], at: string) {
  const extra = Object.keys(o).find((k) => !allowed.includes(k));
  if (extra !== undefined) throw new ListQueryError(`${at}.${extra}`, 'unknown key', allowed);
}

function nodes(value: unknown, at: string, depth: number): RawNode[] {
  if (!Array.isArray(value)) throw new ListQueryError(at, 'must be an array of conditions');
  if (depth > MAX_DEPTH) throw new ListQueryError(at, `and/or nest at most ${MAX_DEPTH} deep`);
  return value.map((n, i) => node(n, `${at}[${i}]`, depth));
}

function node(n: unknown, at: string, depth: number): RawNode {
  if (!isObject(n)) throw new ListQueryError(at, 'must be an object {field, operator, value}');
  onlyKeys(n, NODE_KEYS, at);
  const { field = '', operator, value } = n;
  if (typeof operator !== 'string') throw new ListQueryError(`${at}.operator`, 'must be a string');
  if (typeof field !== 'string') throw new ListQueryError(`${at}.field`, 'must be a string');
  if ((LOGICAL_OPERATORS as readonly string[]).includes(operator)) {
    if (field !== '') throw new ListQueryError(`${at}.field`, `must be empty for "${operator}"`);
    const children = nodes(value, `${at}.value`, depth + 1);
    if (children.length === 0) throw new ListQueryError(`${at}.value`, `"${operator}" needs at least one condition`);
    return { kind: 'logical', operator: operator as LogicalOperator, children, at };
  }
  if (field === '') throw new ListQueryError(`${at}.field`, `is required (empty only with "and" / "or")`);
  const path = field.split('.');
  if (path.some((s) => s === '')) throw new ListQueryError(`${at}.field`, `"${field}" has an empty path segment (nested fields are a.b)`);
  if (!('value' in n)) throw new ListQueryError(`${at}.value`, 'is required');
  return { kind: 'condition', field: path, operator, value: { json: value }, at: { field: `${at}.field`, operator: `${at}.operator`, value: `${at}.value` } };
}

function sortOf(sort: unknown): RawSortKey[] {
  if (sort === undefined) return [];
  if (!Array.isArray(sort)) throw new ListQueryError('_q.sort', 'must be an array of [field, direction]');
  return sort.map((item, i) => {
    const at = `_q.sort[${i}]`;
    if (!Array.isArray(item) || item.length !== 2) throw new ListQueryError(at, 'must be [field, direction]');
    const [field, direction] = item;
    if (typeof field !== 'string' || field === '' || field.split('.').includes('')) throw new ListQueryError(`${at}[0]`, 'must be a field name');
    if (direction !== 'asc' && direction !== 'desc') throw new ListQueryError(`${at}[1]`, 'must be a direction', ['asc', 'desc']);
    return { field: field.split('.'), direction, at: `${at}[0]` };
  });
}

function pagingOf(paging: unknown): RawListQuery['paging'] {
  if (paging === undefined) return null;
  if (!isObject(paging)) throw new ListQueryError('_q.paging', 'must be {start, limit}');
  onlyKeys(paging, ['start', 'limit'], '_q.paging');
  const integer = (key: 'start' | 'limit') => {
    const v = paging[key];
    if (v === undefined) throw new ListQueryError(`_q.paging.${key}`, 'start and limit go together: send both or neither');
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_START) throw new ListQueryError(`_q.paging.${key}`, `must be an integer from 0 to ${MAX_START}`);
    return v;
  };
  return { start: integer('start'), limit: integer('limit'), at: { start: '_q.paging.start', limit: '_q.paging.limit' } };
}

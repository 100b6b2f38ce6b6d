import type { ConditionValue, ListFilter, ListQuery, ListSortKey, Scalar } from './ast';
import { isLogical } from './ast';
import { ListQueryError } from './errors';
import { readJsonForm } from './json-form';
import { type ConditionOperator, GROUP_TOKENS, type GroupToken, type LogicalOperator, OPERATORS_BY_TYPE, VALUE_SHAPE, isConditionOperator, isOrderedOperator } from './operators';
import { MAX_CONDITIONS, MAX_LIST_VALUES, MAX_SORT_KEYS, type RawCondition, type RawListQuery, type RawNode } from './raw';
import { type ListResource, type ResolvedField, fieldNames, limitsOf, resolveField } from './resource';
import { readUrlForm, splitList } from './url-form';
import { coerceFlag, coerceScalar } from './values';

/** The query string of a list request, as text (`a_eq=1&_sort=b`, a leading `?` is fine) or already split. */
export type ListQueryInput = string | URLSearchParams;

/**
 * Parses either form of product-api.md "List query filter" into the one ListQuery, checked
 * against the resource's whitelist: unknown fields, operators a field's type does not take,
 * values of the wrong type, bad paging or sorting are a ListQueryError naming the parameter.
 * `_q` carries the whole query: with it, any other parameter is refused (there is no rule
 * for mixing the two forms, so none is guessed).
 */
export function parseListQuery(input: ListQueryInput, resource: ListResource): ListQuery {
  const params = typeof input === 'string' ? new URLSearchParams(input.startsWith('?') ? input.slice(1) : input) : input;
  const q = params.getAll('_q');
  if (q.length > 1) throw new ListQueryError('_q', 'given more than once');
  if (q.length === 1) {
    const other = [...params.keys()].find((k) => k !== '_q');
    if (other !== undefined) throw new ListQueryError(other, '_q carries the whole query (filter, paging, sort, group): send this inside it, or send no _q');
    return checkQuery(readJsonForm(q[0]), resource);
  }
  return checkQuery(readUrlForm(params), resource);
}

/** The shared half: both forms' raw queries are checked and typed here, so they agree by construction. */
export function checkQuery(raw: RawListQuery, resource: ListResource): ListQuery {
  const counter = { conditions: 0 };
  const filter = raw.filter.length === 0 ? null : combine('and', raw.filter.map((n) => checkNode(n, resource, raw.separator, counter)));
  return { filter, sort: checkSort(raw, resource), paging: checkPaging(raw, resource), group: checkGroup(raw, resource) };
}

function checkNode(node: RawNode, resource: ListResource, separator: string, counter: { conditions: number }): ListFilter {
  if (node.kind === 'logical') return combine(node.operator, node.children.map((c) => checkNode(c, resource, separator, counter)));
  if (++counter.conditions > MAX_CONDITIONS) throw new ListQueryError(node.at.field, `a query holds at most ${MAX_CONDITIONS} conditions`);
  return checkCondition(node, resource, separator);
}

/** and/or with nested same-operator nodes flattened and a single child standing alone: equal queries, equal trees. */
function combine(operator: LogicalOperator, children: ListFilter[]): ListFilter {
  const flat = children.flatMap((c) => (isLogical(c) && c.operator === operator ? c.children : [c]));
  return flat.length === 1 ? flat[0] : { operator, children: flat };
}

function checkCondition(c: RawCondition, resource: ListResource, separator: string): ListFilter {
  const name = c.field.join(separator);
  const field = resolveField(resource, c.field);
  if (!field) throw new ListQueryError(c.at.field, `${resource.name} have no field "${name}"`, fieldNames(resource, separator));
  const allowed = OPERATORS_BY_TYPE[field.type];
  if (!isConditionOperator(c.operator)) throw new ListQueryError(c.at.operator, `unknown operator "${c.operator}" for ${field.type} field "${name}"`, allowed);
  if (!allowed.includes(c.operator)) throw new ListQueryError(c.at.operator, `"${c.operator}" does not apply to ${field.type} field "${name}"`, allowed);
  return { field: c.field, operator: c.operator, value: checkValue(c, c.operator, field) };
}

function checkValue(c: RawCondition, operator: ConditionOperator, field: ResolvedField): ConditionValue {
  const shape = VALUE_SHAPE[operator];
  const at = c.at.value;
  const one = (raw: unknown, where: string): Scalar => {
    const r = shape === 'flag' ? coerceFlag(raw) : coerceScalar(field.type, raw, isOrderedOperator(operator));
    if (!r.ok) throw new ListQueryError(where, r.problem, r.allowed);
    return r.value;
  };
  if (shape === 'flag' || shape === 'scalar') {
    const raw = 'text' in c.value ? c.value.text : c.value.json;
    if (Array.isArray(raw)) throw new ListQueryError(at, `"${c.operator}" takes one value, not an array`);
    return one(raw, at);
  }
  // Lists: `|`-separated in the URL form, arrays in `_q`; string operators also take one value.
  const items: Array<{ raw: unknown; at: string }> =
    'text' in c.value
      ? splitList(c.value.text).map((raw) => ({ raw, at }))
      : Array.isArray(c.value.json)
        ? c.value.json.map((raw, i) => ({ raw, at: `${at}[${i}]` }))
        : shape === 'scalars'
          ? [{ raw: c.value.json, at }]
          : [];
  if (shape === 'pair' && items.length !== 2) throw new ListQueryError(at, `"${c.operator}" takes two values [min, max]${'text' in c.value ? ' written min|max' : ''}`);
  if (items.length === 0) throw new ListQueryError(at, `"${c.operator}" takes an array of values`);
  if (items.length > MAX_LIST_VALUES) throw new ListQueryError(at, `at most ${MAX_LIST_VALUES} values`);
  const values = items.map((i) => one(i.raw, i.at));
  return shape === 'scalars' && values.length === 1 ? values[0] : values;
}

function checkSort(raw: RawListQuery, resource: ListResource): ListSortKey[] {
  if (raw.sort.length > MAX_SORT_KEYS) throw new ListQueryError(raw.sort[0].at, `at most ${MAX_SORT_KEYS} sort fields`);
  const seen = new Set<string>();
  return raw.sort.map((k) => {
    const name = k.field.join(raw.separator);
    const field = resolveField(resource, k.field);
    if (!field?.sortable) throw new ListQueryError(k.at, `${resource.name} cannot be sorted by "${name}"`, fieldNames(resource, raw.separator, (f) => f.sortable));
    if (seen.has(name)) throw new ListQueryError(k.at, `"${name}" is sorted on twice`);
    seen.add(name);
    return { field: k.field, direction: k.direction };
  });
}

function checkPaging(raw: RawListQuery, resource: ListResource): ListQuery['paging'] {
  const { defaultLimit, maxLimit } = limitsOf(resource);
  if (!raw.paging) return { start: 0, limit: defaultLimit };
  const { start, limit, at } = raw.paging;
  if (limit < 1 || limit > maxLimit) throw new ListQueryError(at.limit, `must be from 1 to ${maxLimit}`);
  return { start, limit };
}

function checkGroup(raw: RawListQuery, resource: ListResource): GroupToken | null {
  if (!raw.group) return null;
  if (!resource.group) throw new ListQueryError(raw.group.at, `${resource.name} do not group`);
  const token = raw.group.token;
  if (!Object.hasOwn(GROUP_TOKENS, token)) throw new ListQueryError(raw.group.at, `unknown grouping "${token}"`, Object.keys(GROUP_TOKENS));
  return token as GroupToken;
}

import type { ConditionValue, ListCondition, ListFilter, ListQuery, Scalar } from './ast';
import { isLogical } from './ast';
import { type ConditionOperator, GROUP_TOKENS, NEGATION_OF, isOrderedOperator } from './operators';
import { type ListResource, type ResolvedField, resolveField } from './resource';
import { intervalOf } from './values';

/**
 * A ListQuery as Postgres SQL fragments with bound parameters (`$n`, numbered after the
 * caller's own): `SELECT … WHERE <scope> AND ${where} ORDER BY ${orderBy} LIMIT ${limit}
 * OFFSET ${offset}` with `params`. Nothing the caller sent is ever part of the SQL text.
 */
export interface CompiledListQuery {
  /** `TRUE` when there is no filter. */
  where: string;
  /** The caller's sort (or the resource's default), then the tie-breaker: pages are stable. */
  orderBy: string;
  limit: string;
  offset: string;
  /** UTC time bucket of `_group` over the resource's group field; null without `_group`. */
  group: string | null;
  /** The base parameters given, then the query's. */
  params: unknown[];
  /** The base parameters and those of `where` only: for a `count(*)` of the same filter. */
  filterParams: unknown[];
}

const CAST = { string: 'text', number: 'numeric', date: 'timestamptz', boolean: 'boolean' } as const;

class Binder {
  constructor(readonly params: unknown[]) {}

  bind(value: unknown, cast: string): string {
    this.params.push(value);
    return `$${this.params.length}::${cast}`;
  }
}

export function compileListQuery(query: ListQuery, resource: ListResource, baseParams: readonly unknown[] = []): CompiledListQuery {
  const b = new Binder([...baseParams]);
  const where = query.filter ? filterSql(query.filter, resource, b) : 'TRUE';
  const filterParams = [...b.params];
  const sort = query.sort.length ? query.sort : resource.defaultSort;
  const orderBy = [...sort.map((k) => `${sortExpression(field(resource, k.field), b)} ${k.direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST`), `${resource.tieBreaker} ASC`].join(', ');
  const group = query.group && resource.group ? `date_trunc('${GROUP_TOKENS[query.group]}', ${field(resource, resource.group.split('.')).sql} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'` : null;
  const limit = b.bind(query.paging.limit, 'int');
  const offset = b.bind(query.paging.start, 'int');
  return { where, orderBy, limit, offset, group, params: b.params, filterParams };
}

function field(resource: ListResource, path: readonly string[]): ResolvedField {
  const f = resolveField(resource, path);
  // The query was parsed against another resource: a programming error, not the caller's.
  if (!f) throw new Error(`list query field ${path.join('.')} is not a field of ${resource.name}`);
  return f;
}

function filterSql(node: ListFilter, resource: ListResource, b: Binder): string {
  if (isLogical(node)) return `(${node.children.map((c) => filterSql(c, resource, b)).join(node.operator === 'and' ? ' AND ' : ' OR ')})`;
  return conditionSql(node, field(resource, node.field), b);
}

/** The operators a field's own `equals` predicate takes over (their negations are NOT of them). */
const EQUALITY: readonly ConditionOperator[] = ['eq', 'eqi', 'in', 'ini'];

/**
 * Negative operators (`ne`, `nin`, `ncontains`…, `exists` false) are NOT of the positive
 * one with a missing value counted as not matching it: `name_ne=x` keeps rows without a
 * name. On related rows, positive means "any related row matches", negative "none does".
 */
function conditionSql(c: ListCondition, f: ResolvedField, b: Binder): string {
  const negated = c.operator === 'exists' ? c.value === false : NEGATION_OF[c.operator] !== undefined;
  const operator = NEGATION_OF[c.operator] ?? c.operator;
  let sql =
    f.equals && EQUALITY.includes(operator)
      ? f.equals((Array.isArray(c.value) ? c.value : [c.value]) as Scalar[], operator === 'eqi' || operator === 'ini', (v, cast) => b.bind(v, cast))
      : predicate(operator, valueExpressions(f, b), c.value, f, b);
  if (f.any) sql = f.any(sql);
  return negated ? `NOT coalesce(${sql}, false)` : sql;
}

/** The field as text, as a number (json fields: only JSON numbers), and its presence. */
function valueExpressions(f: ResolvedField, b: Binder): { text: string; number: string; present: string } {
  if (!f.jsonPath) return { text: f.sql, number: f.sql, present: `${f.sql} IS NOT NULL` };
  const path = b.bind(f.jsonPath, 'text[]');
  return {
    text: `(${f.sql} #>> ${path})`,
    number: `(CASE WHEN jsonb_typeof(${f.sql} #> ${path}) = 'number' THEN (${f.sql} #>> ${path})::numeric END)`,
    present: `coalesce(jsonb_typeof(${f.sql} #> ${path}), 'null') <> 'null'`,
  };
}

/**
 * Case-insensitive operators compare ICU lower case: Postgres' `lower()` follows the database's
 * ctype, and a C-locale database (ours: `initdb --no-locale`) lowers ASCII only, so `eqi=émile`
 * missed `ÉMILE` (ADR 0055). `und-x-icu` is the root-locale collation every ICU build of
 * Postgres ships; its equality is byte-wise, so only the case mapping changes.
 */
const lower = (sql: string) => `lower((${sql}) COLLATE "und-x-icu")`;

function predicate(operator: ConditionOperator, x: { text: string; number: string; present: string }, value: ConditionValue, f: ResolvedField, b: Binder): string {
  if (operator === 'exists') return x.present;
  const ordered = isOrderedOperator(operator);
  const expr = f.type === 'json' && ordered ? x.number : x.text;
  const cast = f.type === 'json' ? (ordered ? 'numeric' : 'text') : CAST[f.type];
  const bind = (v: Scalar) => bindScalar(v, cast, b);
  const values = (Array.isArray(value) ? value : [value]) as Scalar[];
  const anyOf = (each: (v: string) => string) => {
    const parts = values.map((v) => each(bind(v)));
    return parts.length === 1 ? parts[0] : `(${parts.join(' OR ')})`;
  };
  switch (operator) {
    case 'eq':
      return `${expr} = ${bind(value as Scalar)}`;
    case 'eqi':
      return `${lower(expr)} = ${lower(bind(value as Scalar))}`;
    case 'lt':
      return `${expr} < ${bind(value as Scalar)}`;
    case 'lte':
      return `${expr} <= ${bind(value as Scalar)}`;
    case 'gt':
      return `${expr} > ${bind(value as Scalar)}`;
    case 'gte':
      return `${expr} >= ${bind(value as Scalar)}`;
    case 'in':
      return `${expr} IN (${values.map(bind).join(', ')})`;
    case 'ini':
      return `${lower(expr)} IN (${values.map((v) => lower(bind(v))).join(', ')})`;
    case 'contains':
      return anyOf((v) => `strpos(${expr}, ${v}) > 0`);
    case 'containsi':
      return anyOf((v) => `strpos(${lower(expr)}, ${lower(v)}) > 0`);
    case 'starts':
      return anyOf((v) => `starts_with(${expr}, ${v})`);
    case 'startsi':
      return anyOf((v) => `starts_with(${lower(expr)}, ${lower(v)})`);
    case 'ends':
      return anyOf((v) => `right(${expr}, length(${v})) = ${v}`);
    case 'endsi':
      // The length of the lowered value: lowering can lengthen a string (`İ` is `i` + U+0307).
      return anyOf((v) => `right(${lower(expr)}, length(${lower(v)})) = ${lower(v)}`);
    case 'range':
    case 'between':
    case 'betweeneq': {
      const [min, max] = values.map(bind);
      const [lo, hi] = operator === 'range' ? ['>=', '<'] : operator === 'between' ? ['>', '<'] : ['>=', '<='];
      return `(${expr} ${lo} ${min} AND ${expr} ${hi} ${max})`;
    }
    default:
      // Negative operators were turned into their positive one by the caller.
      throw new Error(`list query operator ${operator} has no predicate`);
  }
}

function bindScalar(v: Scalar, cast: string, b: Binder): string {
  if (typeof v === 'object') return 'at' in v ? b.bind(v.at, cast) : `(now() - ${b.bind(intervalOf(v.ago), 'interval')})`;
  return b.bind(v, cast);
}

function sortExpression(f: ResolvedField, b: Binder): string {
  return f.jsonPath ? `(${f.sql} #>> ${b.bind(f.jsonPath, 'text[]')})` : f.sql;
}

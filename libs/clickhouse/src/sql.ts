/**
 * Composable SQL text for ClickHouse: `sql` tagged templates, identifiers and trusted fragments.
 *
 * The template's static parts are code (trusted); every `${value}` goes through `literal()`
 * unless it is already a `Sql` fragment (from `sql`, `ident`, `raw` or `join`), which is inserted
 * as is. That is why `sql` returns a `Sql` object and not a plain string: a plain string
 * interpolated into another template is always a value, never SQL. `String(fragment)` and
 * `fragment.text` give the query text; the client accepts `Sql` directly.
 */
import { escapeIdentifier, literal, type LiteralValue } from './escape';

// A registry symbol rather than `instanceof` alone, so fragments stay recognised when two copies
// of this module are loaded (src under Jest and dist in an app, for example). Data can never
// carry a symbol key (JSON cannot), so this does not let input pose as SQL.
const BRAND: unique symbol = Symbol.for('@meld/clickhouse.Sql');

export class Sql {
  readonly [BRAND] = true;
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** What may be interpolated into `sql`. */
export type SqlValue = LiteralValue | Sql;

export function isSql(value: unknown): value is Sql {
  return value instanceof Sql || (typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true);
}

function toText(value: SqlValue): string {
  return isSql(value) ? value.text : literal(value);
}

/** sql`SELECT count() FROM ${ident('events')} WHERE project = ${projectId}` */
export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): Sql {
  // Only a real template literal has `raw`: refuses sql([userInput]) called as a function.
  if (!Array.isArray(strings) || !Array.isArray((strings as TemplateStringsArray).raw)) {
    throw new TypeError('sql must be used as a tagged template: sql`...`');
  }
  let text = strings[0];
  for (let i = 0; i < values.length; i++) text += toText(values[i]) + strings[i + 1];
  return new Sql(text);
}

/** A (possibly qualified) identifier: ident('db', 'table') is `db`.`table`. */
export function ident(...parts: string[]): Sql {
  if (parts.length === 0) throw new TypeError('ident needs at least one name');
  return new Sql(parts.map(escapeIdentifier).join('.'));
}

/** Trusted SQL text inserted verbatim. Never pass input to it. */
export function raw(text: string): Sql {
  if (typeof text !== 'string') throw new TypeError('raw expects a string of trusted SQL');
  return new Sql(text);
}

/** Joins values and fragments: join([1, 2, 3]) is `1, 2, 3`; the separator is trusted SQL. */
export function join(items: readonly SqlValue[], separator = ', '): Sql {
  return new Sql(items.map(toText).join(separator));
}

/** Query text of a fragment or of a trusted static string. */
export function sqlText(query: Sql | string): string {
  if (typeof query === 'string') return query;
  if (isSql(query)) return query.text;
  throw new TypeError('expected SQL text or a Sql fragment');
}

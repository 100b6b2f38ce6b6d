/**
 * Compilation of a parsed audience filter to ClickHouse SQL (18.16: no query parameters, so every
 * value enters through the `sql` template's tested escaper; names come from the catalogue and
 * are escaped as values too).
 *
 * Tables (libs/clickhouse/migrations):
 *   - audience_snapshot: the states of each audience contact, VersionedCollapsingMergeTree(sign,
 *     version) written by the probes sink (ADR 0223): +1 per state, a −1 copy of it when the next
 *     state (or the deletion) arrives. Read without FINAL (ADR 0243): counts sum `sign` over the
 *     matching rows (a state and its cancellation match alike, so each current contact counts
 *     once whatever merges have done); other aggregates read one row per current contact
 *     (liveSnapshot). Attributes are parallel key/value arrays (string, email, phone in str_*;
 *     number, boolean 1/0, date and datetime as unix seconds in num_*), one entry per value of a
 *     multivalue, and slot columns for single-valued ones (migration 0005, ADR 0064).
 *   - events: deduplicated by event_id at read (uniqExact); attached to audience contacts at read
 *     time through audience_membership (argMax by version, deleted = 0), as apps/audience does.
 *     param_values are the JSON encodings (JSON.stringify, apps/probes event-row.ts) of the
 *     values of param_keys; conditions decode them in SQL (see paramValues).
 */
import { join, raw, sql, type Sql } from '@meld/clickhouse';
import { attributeSql, type AttributeSql } from './attribute-sql';
import { endOf, parseFilterDate, startOf } from './dates';
import { liveSnapshot } from './live-snapshot';
import { latestMembership } from './membership-sql';
import { AudienceFilterError } from './errors';
import { AUDIENCE_FILTER_LIMITS } from './limits';
import { predicateOf, type Predicate, type ValueTest } from './predicate';
import { ISO_DATE_PATTERN, isoSecondsSql } from './sql-dates';
import type { AttributeConditionNode, AudienceFilterNode, EventConditionNode, GroupEventNode, AudienceValueKind } from './types';

const TRUE = raw('1');
const FALSE = raw('0');
/** The last second a ClickHouse DateTime holds (2105-12-31 23:59:59 UTC on 18.16). */
const MAX_DATETIME = 4_291_747_199;
/** A JSON string as JSON.stringify writes it (quotes included). */
const JSON_STRING = '"(?:[^"\\\\]|\\\\.)*"';
const JSON_NUMBER = '-?(?:0|[1-9][0-9]*)(?:[.][0-9]+)?(?:[eE][+-]?[0-9]+)?';

interface Context {
  projectId: string;
  /** Unix seconds. */
  now: number;
}

export interface AudienceFilterOptions {
  projectId: string;
  /** The parsed root (parseAudienceFilter); absent: every current contact. */
  root?: AudienceFilterNode;
  /** Reference time of `in-last-days` and `lastDays` (default: the current time). */
  now?: Date;
  /** An extra condition over the snapshot's columns, AND-ed with the filter (e.g. a channel). */
  where?: Sql;
}

export interface AudienceSelectOptions extends AudienceFilterOptions {
  /** SQL over the snapshot's columns, one row per current contact, e.g. sql`uniqCombined(s3) AS d3`. */
  columns: Sql;
}

export interface AudienceCountOptions extends AudienceFilterOptions {
  /** Output columns: name → the row condition it counts (undefined: every contact matching the filter). */
  counts: ReadonlyArray<readonly [name: string, condition?: Sql]>;
}

const COLUMN_NAME = /^[a-z_][a-z0-9_]*$/i;

/**
 * SELECT <columns> FROM the current (non-deleted) audience contacts of a project WHERE <root>,
 * one row per contact (liveSnapshot). Unqualified table names: the client's database.
 */
export function audienceSelect(opts: AudienceSelectOptions): Sql {
  return checkedSize(sql`SELECT ${opts.columns} FROM ${liveSnapshot(opts.projectId, [...compiledRoot(opts), ...(opts.where ? [opts.where] : [])])}`);
}

/**
 * Exact counts of the current contacts matching the filter (and each count's condition) in one
 * plain read of the snapshot: `sum(sign)` over the matching rows (ADR 0243). One read sees one
 * set of parts, so a sink insert or a merge during the query never shows a contact twice.
 */
export function audienceCount(opts: AudienceCountOptions): Sql {
  const columns = opts.counts.map(([name, condition]) => {
    if (!COLUMN_NAME.test(name)) throw new Error(`audienceCount: bad column name ${JSON.stringify(name)}`);
    return condition ? sql`sumIf(sign, ${condition}) AS ${raw(name)}` : sql`sum(sign) AS ${raw(name)}`;
  });
  const where = [sql`project_id = ${opts.projectId}`, sql`deleted = 0`, ...compiledRoot(opts), ...(opts.where ? [sql`(${opts.where})`] : [])];
  return checkedSize(sql`SELECT ${join(columns)} FROM audience_snapshot WHERE ${join(where, ' AND ')}`);
}

export interface AudiencePageOptions extends AudienceFilterOptions {
  /** Keyset position: list the contacts after this one in the table's order (a scroll's next page). */
  after?: { hash: string; id: string };
  /** Contacts to skip before the page (a search's `from`). */
  offset?: number;
  limit: number;
  /**
   * Only contacts whose audience_hash is in [from, below) (decimal strings; no `below`: to the
   * end). The primary key prunes outside it, so a page scans its window, not what follows.
   */
  window?: { from: string; below?: string };
}

/**
 * One page of the current contacts matching the filter, `hash` (as a decimal string) and `id`,
 * in the table's own order (audience_hash, audience_id): stable, and a keyset position prunes
 * with the primary key. Like counts, one plain read summing `sign` per contact (ADR 0243): a
 * contact is listed once, when its current state matches, whatever merges have collapsed.
 */
export function audiencePage(opts: AudiencePageOptions): Sql {
  const count = (n: number, what: string) => {
    if (!Number.isSafeInteger(n) || n < 0) throw new Error(`audiencePage: bad ${what} ${n}`);
    return raw(String(n));
  };
  const after = opts.after
    ? [sql`(audience_hash > toUInt64(${opts.after.hash}) OR (audience_hash = toUInt64(${opts.after.hash}) AND audience_id > ${opts.after.id}))`]
    : [];
  const window = opts.window
    ? [sql`audience_hash >= toUInt64(${opts.window.from})`, ...(opts.window.below === undefined ? [] : [sql`audience_hash < toUInt64(${opts.window.below})`])]
    : [];
  const where = [sql`project_id = ${opts.projectId}`, sql`deleted = 0`, ...window, ...after, ...compiledRoot(opts)];
  return checkedSize(
    sql`SELECT toString(audience_hash) AS hash, audience_id AS id FROM audience_snapshot WHERE ${join(where, ' AND ')}
        GROUP BY audience_hash, audience_id HAVING sum(sign) > 0 ORDER BY audience_hash, audience_id LIMIT ${count(opts.offset ?? 0, 'offset')}, ${count(opts.limit, 'limit')}`,
  );
}

/** One key of a sorted page: a single-valued attribute's SQL (attributeSql), ascending or descending. */
export interface AudienceSortKey {
  attribute: AttributeSql;
  descending: boolean;
}

export interface AudienceSortedPageOptions extends AudienceFilterOptions {
  sort: readonly AudienceSortKey[];
  offset: number;
  limit: number;
}

/**
 * One page of the current contacts matching the filter, ordered by attribute values (ADR 0337):
 * contacts without a value after those with one in either direction, ties in the table's order,
 * so pages at successive offsets never overlap. One row per current contact (liveSnapshot), not a
 * sum of `sign` per contact: ClickHouse then sorts the rows for the page's top without grouping
 * the whole match, 1.7-2.4× faster on 1M contacts. The price is liveSnapshot's: a contact whose
 * state changes while the query runs can show twice (the caller keeps its first row) or not at
 * all in that one answer. The whole match is sorted per page, so this is for offsets within a
 * search's window, not for scrolls.
 */
export function audienceSortedPage(opts: AudienceSortedPageOptions): Sql {
  if (!opts.sort.length) throw new Error('audienceSortedPage: no sort key');
  for (const n of [opts.offset, opts.limit]) if (!Number.isSafeInteger(n) || n < 0) throw new Error(`audienceSortedPage: bad offset or limit ${n}`);
  const order = opts.sort.map((key) => sql`${key.attribute.present} DESC, ${key.attribute.value} ${raw(key.descending ? 'DESC' : 'ASC')}`);
  return checkedSize(
    sql`SELECT toString(audience_hash) AS hash, audience_id AS id FROM ${liveSnapshot(opts.projectId, compiledRoot(opts))}
        ORDER BY ${join(order)}, audience_hash, audience_id LIMIT ${raw(String(opts.offset))}, ${raw(String(opts.limit))}`,
  );
}

export interface AudienceTermsOptions extends AudienceFilterOptions {
  /** The attribute's SQL (attributeSql): a single-valued one is grouped by its value, a multivalue one by each distinct value. */
  attribute: AttributeSql;
  multivalue: boolean;
  limit: number;
}

/**
 * The most frequent values among the current contacts matching the filter (`value` as text, `n`
 * its contacts), exact: `sign` summed per value in one plain read, as counts are (ADR 0243); a
 * multivalue attribute's distinct values are joined out first, so a contact counts once per
 * value. Ties go to the smaller value, so the answer is stable.
 */
export function audienceTerms(opts: AudienceTermsOptions): Sql {
  if (!Number.isSafeInteger(opts.limit) || opts.limit < 1) throw new Error(`audienceTerms: bad limit ${opts.limit}`);
  const where = [sql`project_id = ${opts.projectId}`, sql`deleted = 0`, ...compiledRoot(opts)];
  const tail = sql`GROUP BY value HAVING n > 0 ORDER BY n DESC, value LIMIT ${raw(String(opts.limit))}`;
  if (!opts.multivalue) {
    return checkedSize(sql`SELECT toString(${opts.attribute.value}) AS value, sum(sign) AS n FROM audience_snapshot WHERE ${join([...where, opts.attribute.present], ' AND ')} ${tail}`);
  }
  return checkedSize(
    sql`SELECT toString(v) AS value, sum(sign) AS n FROM audience_snapshot ARRAY JOIN arrayDistinct(${opts.attribute.values}) AS v WHERE ${join(where, ' AND ')} ${tail}`,
  );
}

/** The compiled root, if any: an expression that needs no parentheses in an AND. */
function compiledRoot(opts: AudienceFilterOptions): Sql[] {
  const ctx: Context = { projectId: opts.projectId, now: Math.floor((opts.now ?? new Date()).getTime() / 1000) };
  return opts.root ? [compileNode(opts.root, ctx)] : [];
}

/** `query` if its text fits AUDIENCE_FILTER_LIMITS.maxSqlBytes, else the 400 at `root` of a filter too large (ADR 0058). */
export function checkedSize(query: Sql): Sql {
  if (Buffer.byteLength(query.text) > AUDIENCE_FILTER_LIMITS.maxSqlBytes) {
    throw new AudienceFilterError('root', `the filter is too large (its query would exceed ${AUDIENCE_FILTER_LIMITS.maxSqlBytes} bytes): use fewer or shorter values`);
  }
  return query;
}

/** A boolean SQL expression over an audience_snapshot row. */
export function compileNode(node: AudienceFilterNode, ctx: Context): Sql {
  switch (node.type) {
    case 'group': {
      // An empty group places no condition (a UI's fresh "all of" / "any of" means everyone).
      const children = node.children.map((c) => compileNode(c, ctx));
      const body = children.length === 0 ? TRUE : sql`(${join(children, node.operator === 'and' ? ' AND ' : ' OR ')})`;
      return node.negate ? not(body) : body;
    }
    case 'attribute_condition':
      return attributeCondition(node, ctx);
    case 'group_event':
      return groupEvent(node, ctx);
    case 'event_condition':
      // Standalone: has such an event at any time.
      return groupEvent({ type: 'group_event', eventType: node.eventType, negate: false, children: [node], ...(node.keptDays ? { keptDays: node.keptDays } : {}) }, ctx);
  }
}

const not = (e: Sql): Sql => sql`(NOT ${e})`;

function attributeCondition(node: AttributeConditionNode, ctx: Context): Sql {
  const p = predicateOf(node.operator, node.values, node.valueKind, ctx.now);
  // Slot column or arrays: both read an absent value as the default ('' or 0).
  const stored = attributeSql(node);
  const present = stored.present;
  let exists: Sql;
  if (!p.test) exists = present;
  // A lambda over whole arrays evaluates its body on every entry (no short-circuit), so the
  // value of a single-valued attribute is picked by index: lowerUTF8 then runs once per row.
  // The presence check is needed only when the test holds for the default.
  else if (!node.multivalue) {
    const value = valueTest(p.test, stored.value, 'attribute');
    exists = holdsForDefault(p.test) ? sql`(${present} AND ${value})` : sql`(${value})`;
  }
  else exists = sql`arrayExists(x -> ${valueTest(p.test, raw('x'), 'attribute')}, ${stored.values})`;
  return p.negated ? not(exists) : exists;
}

/** Whether a test holds for the value an absent attribute reads as ('' for strings, 0 otherwise). */
function holdsForDefault(test: ValueTest): boolean {
  switch (test.kind) {
    case 'equals-ci':
      return test.values.includes('');
    case 'contains-ci':
    case 'starts-ci':
    case 'ends-ci':
      // Needles are non-empty (parse.ts), and lowerUTF8 keeps a non-empty string non-empty.
      return test.values.some((v) => v === '');
    case 'equals-number':
      return test.values.includes(0);
    case 'range':
      return (test.min === undefined || (test.minStrict ? 0 > test.min : 0 >= test.min)) && (test.max === undefined || (test.maxStrict ? 0 < test.max : 0 <= test.max));
    case 'boolean':
      return !test.value;
  }
}

/** Strings compare lower-cased by ClickHouse's lowerUTF8; ASCII is lowered here to keep the query short (same result). */
function lowered(v: string): Sql {
  return /^[\x00-\x7f]*$/.test(v) ? sql`${v.toLowerCase()}` : sql`lowerUTF8(${v})`;
}

/** The needle as RE2 reads text: its metacharacters escaped. */
const reLiteral = (v: string): string => v.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/**
 * Whether the lower-cased string `lx` contains, starts or ends with one of several needles: one
 * RE2 alternation. ClickHouse 18.16 analyses a chain of ORs in more than quadratic time (500
 * terms 0.4 s, 2,000 6.5 s, 5,000 79 s on three rows), so a filter within AUDIENCE_FILTER_LIMITS
 * timed out whatever the audience's size; `match` takes 0.07 s for 5,000 needles on 200,000 rows
 * (a lambda over an array of needles cannot read a column it captures there, and is slower per
 * row). Needles are lowered as `lowered` does: non-ASCII ones by lowerUTF8, in a constant concat.
 */
function anyNeedle(lx: Sql, values: readonly string[], kind: 'contains' | 'starts' | 'ends'): Sql {
  const [open, close] = kind === 'starts' ? ['^(?:', ')'] : kind === 'ends' ? ['(?:', ')$'] : ['(?:', ')'];
  const escaped = values.map(reLiteral);
  if (escaped.every((v) => /^[\x00-\x7f]*$/.test(v))) return sql`match(${lx}, ${open + escaped.map((v) => v.toLowerCase()).join('|') + close})`;
  return sql`match(${lx}, concat(${open}, ${join(escaped.map(lowered), ", '|', ")}, ${close}))`;
}

/** `x` is a String (string kinds), a Float64 / Int64 (numbers, dates) or 'true'/'false' (event booleans). */
function valueTest(test: ValueTest, x: Sql, where: 'attribute' | 'event'): Sql {
  const lx = sql`lowerUTF8(${x})`;
  switch (test.kind) {
    case 'equals-ci':
      return test.values.length === 1 ? sql`${lx} = ${lowered(test.values[0])}` : sql`has([${join(test.values.map(lowered))}], ${lx})`;
    case 'contains-ci':
      return test.values.length === 1 ? sql`position(${lx}, ${lowered(test.values[0])}) > 0` : anyNeedle(lx, test.values, 'contains');
    case 'starts-ci':
      return test.values.length === 1 ? sql`startsWith(${lx}, ${lowered(test.values[0])})` : anyNeedle(lx, test.values, 'starts');
    case 'ends-ci':
      return test.values.length === 1 ? sql`endsWith(${lx}, ${lowered(test.values[0])})` : anyNeedle(lx, test.values, 'ends');
    case 'equals-number':
      // -0 as 0: IN hashes the set, and the hash of -0. is not that of 0. (JSON never stores -0).
      return sql`${x} IN (${join(test.values.map((v) => (v === 0 ? 0 : v)))})`;
    case 'range': {
      const parts: Sql[] = [];
      if (test.min !== undefined) parts.push(test.minStrict ? sql`${x} > ${test.min}` : sql`${x} >= ${test.min}`);
      if (test.max !== undefined) parts.push(test.maxStrict ? sql`${x} < ${test.max}` : sql`${x} <= ${test.max}`);
      return parts.length ? sql`(${join(parts, ' AND ')})` : TRUE;
    }
    case 'boolean':
      return where === 'attribute' ? sql`${x} = ${test.value ? 1 : 0}` : sql`${x} = ${test.value ? 'true' : 'false'}`;
  }
}

/** The decoded values of an event parameter on an events row, as an array of the kind's SQL type (also what the event-volumes probe lists). */
export function paramValues(parameter: string, kind: AudienceValueKind): Sql {
  const json = sql`param_values[indexOf(param_keys, ${parameter})]`;
  // A number or boolean is never quoted; a quote means the stored value is not of the declared type.
  const unquoted = sql`if(position(${json}, '"') = 0, ${json}, '')`;
  const strings = sql`arrayMap(s -> visitParamExtractString(concat('{"v":', s, '}'), 'v'), extractAll(${json}, ${JSON_STRING}))`;
  switch (kind) {
    case 'string':
      return strings;
    case 'number':
      return sql`arrayMap(s -> toFloat64OrZero(s), extractAll(${unquoted}, ${JSON_NUMBER}))`;
    case 'boolean':
      return sql`extractAll(${unquoted}, 'true|false')`;
    case 'date':
      return sql`arrayMap(s -> ${isoSecondsSql(raw('s'))}, arrayFilter(s -> match(s, ${ISO_DATE_PATTERN}), ${strings}))`;
  }
}

function eventCondition(node: EventConditionNode, ctx: Context): Sql {
  const p: Predicate = predicateOf(node.operator, node.values, node.valueKind, ctx.now);
  let exists: Sql;
  if (p.test?.kind === 'equals-ci' && node.valueKind === 'string') {
    // Equality needs no decoding: JSON.stringify is canonical and its escapes have no case, so
    // lower(json(v)) = json(lower(v)); the stored JSON is compared with the values' JSON.
    const json = sql`param_values[indexOf(param_keys, ${node.parameter})]`;
    const wanted = sql`[${join(p.test.values.map((v) => lowered(JSON.stringify(v))))}]`;
    exists = node.multivalue ? sql`arrayExists(t -> has(${wanted}, lowerUTF8(t)), extractAll(${json}, ${JSON_STRING}))` : sql`has(${wanted}, lowerUTF8(${json}))`;
  } else {
    const values = paramValues(node.parameter, node.valueKind);
    exists = p.test ? sql`arrayExists(x -> ${valueTest(p.test, raw('x'), 'event')}, ${values})` : sql`notEmpty(${values})`;
  }
  return p.negated ? not(exists) : exists;
}

/** [from, to] in unix seconds, inclusive, of a timeframe within the kept history; null when nothing can match. */
function timeframeBounds(node: GroupEventNode, now: number): [number, number] | null {
  const tf = node.timeframe;
  let [lo, hi] = [0, MAX_DATETIME];
  if (tf && 'lastDays' in tf) [lo, hi] = [now - tf.lastDays * 86_400, now];
  else if (tf) {
    if (tf.from !== undefined) lo = startOf(parseFilterDate(tf.from)!);
    if (tf.to !== undefined) hi = endOf(parseFilterDate(tf.to)!);
  }
  // Events past the plan's look-back (or the type's retention) are history the project does not
  // keep: retention prunes them hourly (ADR 0168), and until it has, they must not count, or a
  // count would fall by itself an hour after a backfill of old events (ADR 0060).
  if (node.keptDays !== undefined) lo = Math.max(lo, now - node.keptDays * 86_400);
  [lo, hi] = [Math.max(lo, 0), Math.min(hi, MAX_DATETIME)];
  return lo <= hi ? [lo, hi] : null;
}

function groupEvent(node: GroupEventNode, ctx: Context): Sql {
  const bounds = timeframeBounds(node, ctx.now);
  // PREWHERE: the sorting key (project_id, event_type, event_date, …, migration 0004) picks the
  // rows, and the parameter conditions run on those rows only.
  const pre = [sql`project_id = ${ctx.projectId}`, sql`event_type = ${node.eventType}`];
  if (bounds) {
    if (bounds[0] > 0) pre.push(sql`event_date >= toDateTime(${bounds[0]})`);
    if (bounds[1] < MAX_DATETIME) pre.push(sql`event_date <= toDateTime(${bounds[1]})`);
  } else pre.push(FALSE);
  const where = node.children.map((c) => eventCondition(c, ctx));
  const events = sql`events PREWHERE ${join(pre, ' AND ')}${where.length ? sql` WHERE ${join(where, ' AND ')}` : raw('')}`;

  // Source contacts with a matching event → their current audience contact (latest membership
  // row, not deleted). Only the memberships of those source contacts are grouped.
  const members = latestMembership(ctx.projectId, sql`(data_source_id, user_id) IN (SELECT data_source_id, user_id FROM ${events})`);
  const anyEvent = sql`audience_id IN (SELECT aid FROM (${members}) WHERE gone = 0)`;
  // Counted: the distinct ids of the matching events per audience contact. One id can stand on
  // several of its source contacts (two integrations forwarding one order; copies dated apart
  // never merge, their sorting keys differ), and a resent id never counts twice (system.md §1),
  // so the ids are gathered per source contact and counted once over all of them (ADR 0060). As
  // 64-bit hashes: as fast as the per-source uniqExact it replaces, where the strings themselves
  // took 3 times as long; two ids of a contact with 100,000 events collide with odds of 3 in 10^10.
  const counted = (having: Sql): Sql =>
    sql`audience_id IN (SELECT aid FROM (${members}) ANY INNER JOIN (SELECT data_source_id, user_id, groupArray(cityHash64(event_id)) AS ids FROM ${events} GROUP BY data_source_id, user_id) USING (data_source_id, user_id) WHERE gone = 0 GROUP BY aid HAVING ${having})`;

  const { operator, value } = node.count ?? { operator: 'at-least', value: 1 };
  const n = raw('uniqExactArray(ids)');
  let condition: Sql;
  if (operator === 'at-least') condition = value <= 0 ? TRUE : value === 1 ? anyEvent : counted(sql`${n} >= ${value}`);
  else if (operator === 'at-most') condition = not(value === 0 ? anyEvent : counted(sql`${n} > ${value}`));
  else condition = value === 0 ? not(anyEvent) : counted(sql`${n} = ${value}`);
  return node.negate ? not(condition) : condition;
}

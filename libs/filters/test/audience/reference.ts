/**
 * An in-memory reference evaluator of the audience filter, written from the documented
 * semantics (ADR 0059, ADR 0060) independently of the compiler:
 * the property test checks that the compiled SQL returns the same set.
 */
import type { AttributeConditionNode, AudienceFilterNode, EventConditionNode, GroupEventNode } from '../../src/audience';
import type { Scalar, World, WorldEvent } from './world';

const DAY = 86_400;
const isDay = (s: string): boolean => /^\d{4}-\d{2}-\d{2}$/.test(s);
const sec = (s: string): number => Math.floor(Date.parse(isDay(s) ? `${s}T00:00:00Z` : s) / 1000);
const lastSec = (s: string): number => (isDay(s) ? sec(s) + DAY - 1 : sec(s));

type Cond = Pick<AttributeConditionNode, 'operator' | 'values' | 'valueKind'>;

/** Does the list of values of one attribute / parameter satisfy the condition? Values are raw (dates as ISO strings). */
function holds(cond: Cond, raw: Scalar[], now: number): boolean {
  const { operator, values, valueKind } = cond;
  const vs = valueKind === 'date' ? raw.map((v) => sec(String(v))) : raw;
  const strs = raw.map((v) => String(v).toLowerCase());
  const given = values.map((v) => String(v).toLowerCase());
  const nums = vs as number[];
  switch (operator) {
    case 'is-set':
      return raw.length > 0;
    case 'is-not-set':
      return raw.length === 0;
    case 'matches-string':
      return strs.some((s) => given.includes(s));
    case 'not-matches-string':
      return !strs.some((s) => given.includes(s));
    case 'contains-string':
      return strs.some((s) => given.some((g) => s.includes(g)));
    case 'starts-with-string':
      return strs.some((s) => given.some((g) => s.startsWith(g)));
    case 'ends-with-string':
      return strs.some((s) => given.some((g) => s.endsWith(g)));
    case 'equals-number':
      return nums.some((n) => values.includes(n));
    case 'greater-than':
      return nums.some((n) => n > Number(values[0]));
    case 'less-than':
      return nums.some((n) => n < Number(values[0]));
    case 'between':
      return valueKind === 'date'
        ? nums.some((n) => n >= sec(String(values[0])) && n <= lastSec(String(values[1])))
        : nums.some((n) => n >= Number(values[0]) && n <= Number(values[1]));
    case 'before-date':
      return nums.some((n) => n < sec(String(values[0])));
    case 'after-date':
      return nums.some((n) => n > lastSec(String(values[0])));
    case 'in-last-days':
      return nums.some((n) => n >= now - Number(values[0]) * DAY && n <= now);
    case 'is-true':
      return raw.some((v) => v === true);
    case 'is-false':
      return raw.some((v) => v === false);
  }
}

const listOf = (v: unknown): Scalar[] => (v === undefined || v === null ? [] : Array.isArray(v) ? (v as Scalar[]) : [v as Scalar]);

function eventMatches(node: GroupEventNode, e: WorldEvent, now: number): boolean {
  if (e.type !== node.eventType) return false;
  // History past the plan's look-back (or the type's retention) does not count (ADR 0060).
  if (node.keptDays !== undefined && e.date < now - node.keptDays * DAY) return false;
  const tf = node.timeframe;
  if (tf && 'lastDays' in tf && !(e.date >= now - tf.lastDays * DAY && e.date <= now)) return false;
  if (tf && !('lastDays' in tf)) {
    if (tf.from !== undefined && e.date < sec(tf.from)) return false;
    if (tf.to !== undefined && e.date > lastSec(tf.to)) return false;
  }
  return node.children.every((c: EventConditionNode) => holds(c, listOf(e.params[c.parameter]), now));
}

/** The ids of the world's contacts the filter selects at `now` (unix seconds). */
export function referenceSelect(root: AudienceFilterNode | undefined, world: World, now: number): Set<string> {
  const eventsOf = new Map<string, WorldEvent[]>();
  const owner = new Map(world.sources.map((s) => [`${s.ds}\u0000${s.user}`, s.aid]));
  const seen = new Set<string>();
  for (const e of world.events) {
    const aid = owner.get(`${e.ds}\u0000${e.user}`);
    if (!aid || seen.has(e.id)) continue;
    seen.add(e.id);
    eventsOf.set(aid, [...(eventsOf.get(aid) ?? []), e]);
  }
  const test = (node: AudienceFilterNode, id: string, attributes: Record<string, Scalar | Scalar[]>): boolean => {
    switch (node.type) {
      case 'group': {
        const results = node.children.map((c) => test(c, id, attributes));
        const r = results.length === 0 || (node.operator === 'and' ? results.every(Boolean) : results.some(Boolean));
        return node.negate ? !r : r;
      }
      case 'attribute_condition':
        return holds(node, listOf(attributes[node.key]), now);
      case 'event_condition':
        return test({ type: 'group_event', eventType: node.eventType, negate: false, children: [node], keptDays: node.keptDays }, id, attributes);
      case 'group_event': {
        const n = (eventsOf.get(id) ?? []).filter((e) => eventMatches(node, e, now)).length;
        const { operator, value } = node.count ?? { operator: 'at-least', value: 1 };
        const r = operator === 'at-least' ? n >= value : operator === 'at-most' ? n <= value : n === value;
        return node.negate ? !r : r;
      }
    }
  };
  return new Set(world.contacts.filter((c) => !root || test(root, c.id, c.attributes)).map((c) => c.id));
}


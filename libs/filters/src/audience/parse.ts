/**
 * Parsing of an audience filter root against the grammar (system.md section 4) and the
 * project catalogue. Hand-written rather than zod: every refusal must name the JSON path of the
 * bad node and list what is allowed there, and what is allowed depends on the catalogue (the
 * attribute's type decides its operators, the event type its parameters).
 *
 * Refused: unknown node types, fields, operators, attributes, event types and parameters;
 * operators that do not apply to the attribute's type; values of the wrong type or arity;
 * trees beyond AUDIENCE_FILTER_LIMITS. Defaults: group `operator` `and`, `negate` false, group_event
 * `children` [] and `count` {at-least 1}.
 */
import { endOf, parseFilterDate, startOf } from './dates';
import { AudienceFilterError } from './errors';
import { AUDIENCE_FILTER_LIMITS } from './limits';
import { slotOf, type AttributeSlot } from './slots';
import {
  AUDIENCE_FILTER_VERSION,
  AUDIENCE_CONDITION_OPERATORS,
  audienceOperatorsFor,
  audienceValueKind,
  type AttributeConditionNode,
  type AudienceFilterNode,
  type AudienceConditionOperator,
  type AudienceConditionValue,
  type EventConditionNode,
  type EventCount,
  type EventTimeframe,
  type FilterCatalogue,
  type GroupEventNode,
  type GroupNode,
  type AudienceValueKind,
} from './types';

const NODE_TYPES = ['group', 'attribute_condition', 'group_event', 'event_condition'] as const;
const FIELDS: Record<(typeof NODE_TYPES)[number], readonly string[]> = {
  group: ['type', 'operator', 'negate', 'children'],
  attribute_condition: ['type', 'key', 'operator', 'values'],
  group_event: ['type', 'eventType', 'timeframe', 'count', 'negate', 'children'],
  event_condition: ['type', 'key', 'operator', 'values'],
};
const GROUP_OPERATORS = ['and', 'or'] as const;
const COUNT_OPERATORS = ['at-least', 'at-most', 'exactly'] as const;
const NO_VALUE_OPERATORS: ReadonlySet<AudienceConditionOperator> = new Set(['is-set', 'is-not-set', 'is-true', 'is-false']);
const ONE_VALUE_OPERATORS: ReadonlySet<AudienceConditionOperator> = new Set(['greater-than', 'less-than', 'before-date', 'after-date', 'in-last-days']);
const NON_EMPTY_STRING_OPERATORS: ReadonlySet<AudienceConditionOperator> = new Set(['contains-string', 'starts-with-string', 'ends-with-string']);
// A lone UTF-16 surrogate has no UTF-8 form: the escaper refuses it, so it is a 400 here.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: Json, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);
const describe = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `${typeof v} ${clip(JSON.stringify(v))}`);
const clip = (s: string, n = 64): string => (s.length > n ? `${s.slice(0, n)}…` : s);
const field = (path: string, name: string): string => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `${path}.${name}` : `${path}[${clip(JSON.stringify(name))}]`);

/** Whether [low, high] holds a second: from low's first second to high's last (a date's 23:59:59), as compile.ts reads them. */
const inOrder = (low: string, high: string): boolean => startOf(parseFilterDate(low)!) <= endOf(parseFilterDate(high)!);

/** Checks the body's `version`: absent, or exactly AUDIENCE_FILTER_VERSION. */
export function parseAudienceFilterVersion(version: unknown, path = 'version'): void {
  if (version !== undefined && version !== AUDIENCE_FILTER_VERSION) {
    throw new AudienceFilterError(path, `unsupported filter version ${describe(version)}`, [AUDIENCE_FILTER_VERSION]);
  }
}

/** Validates a root node (the JSON under `root`) against the grammar and the catalogue. Throws AudienceFilterError. */
export function parseAudienceFilter(root: unknown, catalogue: FilterCatalogue, path = 'root'): AudienceFilterNode {
  return new Parser(catalogue).node(root, path, 1);
}

interface Param {
  eventType: string;
  parameter: string;
  kind: AudienceValueKind;
  multivalue: boolean;
}

class Parser {
  private readonly attributes = new Map<string, { kind: AudienceValueKind; multivalue: boolean; slot?: AttributeSlot }>();
  private readonly eventTypes = new Map<string, Map<string, { kind: AudienceValueKind; multivalue: boolean }>>();
  /** Event type → days its events are kept (the plan's look-back or a shorter retention), when the catalogue says. */
  private readonly keptDays = new Map<string, number>();
  private nodes = 0;
  private values = 0;
  private chars = 0;

  constructor(catalogue: FilterCatalogue) {
    for (const a of catalogue.attributes) {
      const slot = slotOf(a);
      this.attributes.set(a.uid, { kind: audienceValueKind(a.type), multivalue: a.multivalue, ...(slot ? { slot } : {}) });
    }
    for (const t of catalogue.eventTypes) {
      this.eventTypes.set(t.uid, new Map(t.parameters.map((p) => [p.uid, { kind: audienceValueKind(p.dataType), multivalue: (p.multiValue ?? 1) > 1 }])));
      if (typeof t.keptDays === 'number' && Number.isInteger(t.keptDays) && t.keptDays > 0) this.keptDays.set(t.uid, t.keptDays);
    }
  }

  node(input: unknown, path: string, depth: number): AudienceFilterNode {
    const [node, type] = this.header(input, path, NODE_TYPES);
    switch (type) {
      case 'group':
        return this.group(node, path, depth);
      case 'attribute_condition':
        return this.attributeCondition(node, path);
      case 'group_event':
        return this.groupEvent(node, path);
      case 'event_condition':
        return this.eventCondition(node, path, undefined);
    }
  }

  /** An object whose `type` is one of `types` and whose fields are that type's; counts it against maxNodes. */
  private header<T extends (typeof NODE_TYPES)[number]>(input: unknown, path: string, types: readonly T[]): [Json, T] {
    if (!isObject(input)) throw new AudienceFilterError(path, `must be a filter node (an object with a type), not ${describe(input)}`);
    if (++this.nodes > AUDIENCE_FILTER_LIMITS.maxNodes) throw new AudienceFilterError(path, `the filter has more than ${AUDIENCE_FILTER_LIMITS.maxNodes} nodes`);
    const type = input.type;
    if (typeof type !== 'string' || !(types as readonly string[]).includes(type)) {
      const problem = !has(input, 'type') ? 'is required' : (NODE_TYPES as readonly unknown[]).includes(type) ? `a ${String(type)} node cannot stand here` : `unknown node type ${describe(type)}`;
      throw new AudienceFilterError(`${path}.type`, problem, types);
    }
    const t = type as T;
    for (const name of Object.keys(input)) {
      if (!FIELDS[t].includes(name)) throw new AudienceFilterError(field(path, name), `unknown field of a ${t} node`, FIELDS[t]);
    }
    return [input, t];
  }

  private group(input: Json, path: string, depth: number): GroupNode {
    if (depth > AUDIENCE_FILTER_LIMITS.maxDepth) throw new AudienceFilterError(path, `groups nest at most ${AUDIENCE_FILTER_LIMITS.maxDepth} deep`);
    const operator = input.operator ?? 'and';
    if (!(GROUP_OPERATORS as readonly unknown[]).includes(operator)) throw new AudienceFilterError(`${path}.operator`, `unknown group operator ${describe(operator)}`, GROUP_OPERATORS);
    const children = this.children(input, `${path}.children`, true).map((c, i) => this.node(c, `${path}.children[${i}]`, depth + 1));
    return { type: 'group', operator: operator as GroupNode['operator'], negate: this.negate(input, path), children };
  }

  private attributeCondition(input: Json, path: string): AttributeConditionNode {
    const key = this.text(input.key, `${path}.key`);
    const attribute = this.attributes.get(key);
    if (attribute === undefined) throw new AudienceFilterError(`${path}.key`, `unknown attribute ${clip(JSON.stringify(key))}`, [...this.attributes.keys()]);
    const { kind, multivalue, slot } = attribute;
    const operator = this.operator(input.operator, `${path}.operator`, kind, `a ${kind} attribute`);
    const values = this.conditionValues(input, path, operator, kind);
    return { type: 'attribute_condition', key, operator, values, valueKind: kind, multivalue, ...(slot ? { slot } : {}) };
  }

  private groupEvent(input: Json, path: string): GroupEventNode {
    const eventType = this.text(input.eventType, `${path}.eventType`);
    if (!this.eventTypes.has(eventType)) throw new AudienceFilterError(`${path}.eventType`, `unknown event type ${clip(JSON.stringify(eventType))}`, [...this.eventTypes.keys()]);
    const kept = this.keptDays.get(eventType);
    const node: GroupEventNode = { type: 'group_event', eventType, negate: this.negate(input, path), children: [], ...(kept ? { keptDays: kept } : {}) };
    if (input.timeframe !== undefined) node.timeframe = this.timeframe(input.timeframe, `${path}.timeframe`);
    if (input.count !== undefined) node.count = this.count(input.count, `${path}.count`);
    // All children hold on the same event, so they are conditions on this event type only.
    node.children = this.children(input, `${path}.children`, false).map((c, i) => {
      const childPath = `${path}.children[${i}]`;
      return this.eventCondition(this.header(c, childPath, ['event_condition'])[0], childPath, eventType);
    });
    return node;
  }

  private eventCondition(input: Json, path: string, groupEventType: string | undefined): EventConditionNode {
    const key = this.text(input.key, `${path}.key`);
    const param = this.resolveParam(key, `${path}.key`, groupEventType);
    const operator = this.operator(input.operator, `${path}.operator`, param.kind, `a ${param.kind} parameter`);
    const values = this.conditionValues(input, path, operator, param.kind);
    const kept = this.keptDays.get(param.eventType);
    return { type: 'event_condition', key, eventType: param.eventType, parameter: param.parameter, operator, values, valueKind: param.kind, multivalue: param.multivalue, ...(kept ? { keptDays: kept } : {}) };
  }

  /** `<eventType>.<parameter>`; uids may hold dots, so every split is tried (the longest event type wins). */
  private resolveParam(key: string, path: string, groupEventType: string | undefined): Param {
    const types = groupEventType === undefined ? [...this.eventTypes.keys()] : [groupEventType];
    let matchedType: string | undefined;
    for (const t of types.filter((u) => key.startsWith(`${u}.`)).sort((a, b) => b.length - a.length)) {
      const parameter = key.slice(t.length + 1);
      const declared = this.eventTypes.get(t)?.get(parameter);
      if (declared !== undefined) return { eventType: t, parameter, ...declared };
      matchedType ??= t;
    }
    const listed = matchedType ?? groupEventType;
    const allowed = listed === undefined ? [...this.eventTypes].flatMap(([t, ps]) => [...ps.keys()].map((p) => `${t}.${p}`)) : [...(this.eventTypes.get(listed)?.keys() ?? [])].map((p) => `${listed}.${p}`);
    const problem =
      listed === undefined
        ? `unknown event parameter ${clip(JSON.stringify(key))}: keys are <eventType>.<parameter>`
        : groupEventType !== undefined && matchedType === undefined
          ? `${clip(JSON.stringify(key))} is not a parameter of ${groupEventType} (keys are ${groupEventType}.<parameter>)`
          : `unknown parameter of ${listed}: ${clip(JSON.stringify(key))}`;
    throw new AudienceFilterError(path, problem, allowed);
  }

  private operator(input: unknown, path: string, kind: AudienceValueKind, what: string): AudienceConditionOperator {
    const allowed = audienceOperatorsFor(kind);
    if (typeof input !== 'string' || !(AUDIENCE_CONDITION_OPERATORS as readonly string[]).includes(input)) {
      throw new AudienceFilterError(path, input === undefined ? 'is required' : `unknown operator ${describe(input)}`, allowed);
    }
    if (!allowed.includes(input as AudienceConditionOperator)) throw new AudienceFilterError(path, `operator ${input} does not apply to ${what}`, allowed);
    return input as AudienceConditionOperator;
  }

  private conditionValues(input: Json, path: string, operator: AudienceConditionOperator, kind: AudienceValueKind): AudienceConditionValue[] {
    const p = `${path}.values`;
    const raw = input.values ?? [];
    if (!Array.isArray(raw)) throw new AudienceFilterError(p, `must be an array, not ${describe(raw)}`);
    const arity = NO_VALUE_OPERATORS.has(operator) ? [0, 0] : ONE_VALUE_OPERATORS.has(operator) ? [1, 1] : operator === 'between' ? [2, 2] : [1, AUDIENCE_FILTER_LIMITS.maxValues];
    if (raw.length < arity[0] || raw.length > arity[1]) {
      const want = arity[1] === 0 ? 'no values' : arity[0] === arity[1] ? `exactly ${arity[0]} value${arity[0] > 1 ? 's' : ''}` : `1 to ${arity[1]} values`;
      throw new AudienceFilterError(p, `${operator} takes ${want}, not ${raw.length}`);
    }
    this.values += raw.length;
    if (this.values > AUDIENCE_FILTER_LIMITS.maxTotalValues) throw new AudienceFilterError(p, `the filter has more than ${AUDIENCE_FILTER_LIMITS.maxTotalValues} values`);
    const values = raw.map((v, i) => this.conditionValue(v, `${p}[${i}]`, operator, kind));
    // A date stands for its whole day (ADR 0059): [noon of D, D] runs to D's last second, so it is no reversed range.
    if (operator === 'between' && (kind === 'date' ? !inOrder(values[0] as string, values[1] as string) : (values[0] as number) > (values[1] as number))) {
      throw new AudienceFilterError(p, 'between takes [low, high]: the first value must not be above the second');
    }
    return values;
  }

  private conditionValue(v: unknown, path: string, operator: AudienceConditionOperator, kind: AudienceValueKind): AudienceConditionValue {
    if (operator === 'in-last-days') return this.days(v, path);
    if (kind === 'number') {
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new AudienceFilterError(path, `must be a number, not ${describe(v)}`);
      return v;
    }
    const s = this.string(v, path);
    if (kind === 'date' && !parseFilterDate(s)) throw new AudienceFilterError(path, `must be an ISO date (YYYY-MM-DD) or an ISO 8601 date-time with an offset, not ${describe(v)}`);
    if (NON_EMPTY_STRING_OPERATORS.has(operator) && s === '') throw new AudienceFilterError(path, `${operator} needs a non-empty string`);
    return s;
  }

  private string(v: unknown, path: string): string {
    if (typeof v !== 'string') throw new AudienceFilterError(path, `must be a string, not ${describe(v)}`);
    if (v.length > AUDIENCE_FILTER_LIMITS.maxStringLength) throw new AudienceFilterError(path, `must be at most ${AUDIENCE_FILTER_LIMITS.maxStringLength} characters`);
    if (LONE_SURROGATE.test(v)) throw new AudienceFilterError(path, 'must be well-formed Unicode (it holds a lone surrogate)');
    this.chars += v.length;
    if (this.chars > AUDIENCE_FILTER_LIMITS.maxTotalStringLength) throw new AudienceFilterError(path, `the filter's strings total more than ${AUDIENCE_FILTER_LIMITS.maxTotalStringLength} characters`);
    return v;
  }

  /** A name (key, event type): a non-empty string; its existence is checked by the caller. */
  private text(v: unknown, path: string): string {
    if (v === undefined) throw new AudienceFilterError(path, 'is required');
    if (typeof v !== 'string' || v === '') throw new AudienceFilterError(path, `must be a non-empty string, not ${describe(v)}`);
    return v;
  }

  private days(v: unknown, path: string): number {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > AUDIENCE_FILTER_LIMITS.maxDays) {
      throw new AudienceFilterError(path, `must be a whole number of days from 1 to ${AUDIENCE_FILTER_LIMITS.maxDays}, not ${describe(v)}`);
    }
    return v;
  }

  private negate(input: Json, path: string): boolean {
    const v = input.negate ?? false;
    if (typeof v !== 'boolean') throw new AudienceFilterError(`${path}.negate`, `must be a boolean, not ${describe(v)}`);
    return v;
  }

  private children(input: Json, path: string, required: boolean): unknown[] {
    const v = input.children ?? (required ? undefined : []);
    if (v === undefined) throw new AudienceFilterError(path, 'is required (an array of nodes)');
    if (!Array.isArray(v)) throw new AudienceFilterError(path, `must be an array of nodes, not ${describe(v)}`);
    if (v.length > AUDIENCE_FILTER_LIMITS.maxChildren) throw new AudienceFilterError(path, `at most ${AUDIENCE_FILTER_LIMITS.maxChildren} children, not ${v.length}`);
    return v;
  }

  private timeframe(v: unknown, path: string): EventTimeframe {
    if (!isObject(v)) throw new AudienceFilterError(path, `must be {lastDays} or {from, to}, not ${describe(v)}`);
    const keys = Object.keys(v);
    if (has(v, 'lastDays')) {
      const other = keys.find((k) => k !== 'lastDays');
      if (other !== undefined) throw new AudienceFilterError(field(path, other), 'a timeframe is {lastDays} or {from, to}, not both', ['lastDays']);
      return { lastDays: this.days(v.lastDays, `${path}.lastDays`) };
    }
    const other = keys.find((k) => k !== 'from' && k !== 'to');
    if (other !== undefined) throw new AudienceFilterError(field(path, other), 'unknown timeframe field', ['lastDays', 'from', 'to']);
    if (keys.length === 0) throw new AudienceFilterError(path, 'needs lastDays, or from and/or to', ['lastDays', 'from', 'to']);
    const out: { from?: string; to?: string } = {};
    for (const k of ['from', 'to'] as const) {
      if (v[k] === undefined) continue;
      const s = this.string(v[k], `${path}.${k}`);
      if (!parseFilterDate(s)) throw new AudienceFilterError(`${path}.${k}`, `must be an ISO date (YYYY-MM-DD) or an ISO 8601 date-time with an offset, not ${describe(s)}`);
      out[k] = s;
    }
    if (out.from !== undefined && out.to !== undefined && !inOrder(out.from, out.to)) {
      throw new AudienceFilterError(`${path}.to`, 'must not be before from');
    }
    return out;
  }

  private count(v: unknown, path: string): EventCount {
    if (!isObject(v)) throw new AudienceFilterError(path, `must be {operator, value}, not ${describe(v)}`);
    const other = Object.keys(v).find((k) => k !== 'operator' && k !== 'value');
    if (other !== undefined) throw new AudienceFilterError(field(path, other), 'unknown count field', ['operator', 'value']);
    if (!(COUNT_OPERATORS as readonly unknown[]).includes(v.operator)) {
      throw new AudienceFilterError(`${path}.operator`, v.operator === undefined ? 'is required' : `unknown count operator ${describe(v.operator)}`, COUNT_OPERATORS);
    }
    const n = v.value;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > AUDIENCE_FILTER_LIMITS.maxCount) {
      throw new AudienceFilterError(`${path}.value`, `must be a whole number from 0 to ${AUDIENCE_FILTER_LIMITS.maxCount}, not ${describe(n)}`);
    }
    return { operator: v.operator as EventCount['operator'], value: n };
  }
}

import { PROTOTYPE_NAMES } from '@meld/testing';
import { AudienceFilterError } from './errors';
import { AUDIENCE_FILTER_LIMITS } from './limits';
import { parseAudienceFilter, parseAudienceFilterVersion } from './parse';
import { TEST_CATALOGUE } from '../../test/audience/test-catalogue';

const parse = (root: unknown) => parseAudienceFilter(root, TEST_CATALOGUE);
const attr = (key: string, operator: string, values?: unknown[]) => ({ type: 'attribute_condition', key, operator, ...(values ? { values } : {}) });
const group = (children: unknown[], extra: object = {}) => ({ type: 'group', children, ...extra });

function errorOf(root: unknown): AudienceFilterError {
  try {
    parse(root);
  } catch (err) {
    if (err instanceof AudienceFilterError) return err;
    throw err;
  }
  throw new Error('expected an AudienceFilterError');
}

describe('parseAudienceFilter: accepted trees', () => {
  it('fills defaults and resolves value kinds from the catalogue', () => {
    expect(parse(group([attr('city', 'matches-string', ['Paris'])]))).toEqual({
      type: 'group',
      operator: 'and',
      negate: false,
      children: [{ type: 'attribute_condition', key: 'city', operator: 'matches-string', values: ['Paris'], valueKind: 'string', multivalue: false, slot: { kind: 'str', index: 0 } }],
    });
  });

  it('names the slot column of a single-valued attribute only, and only for a slot within range', () => {
    const columnOf = (attribute: { uid: string; type: 'string' | 'number'; multivalue: boolean; slot?: number | null }) => {
      const node = parseAudienceFilter(attr(attribute.uid, 'is-set'), { attributes: [attribute], eventTypes: [] });
      return node.type === 'attribute_condition' ? node.slot : 'not a condition';
    };
    expect(columnOf({ uid: 'a', type: 'string', multivalue: false, slot: 31 })).toEqual({ kind: 'str', index: 31 });
    expect(columnOf({ uid: 'a', type: 'number', multivalue: false, slot: 0 })).toEqual({ kind: 'num', index: 0 });
    expect(columnOf({ uid: 'a', type: 'string', multivalue: true, slot: 3 })).toBeUndefined();
    for (const slot of [null, undefined, -1, 32, 1.5, Number.NaN]) expect(columnOf({ uid: 'a', type: 'string', multivalue: false, slot })).toBeUndefined();
  });

  it.each([
    ['string', attr('_email', 'ends-with-string', ['@example.com'])],
    ['number between', attr('score', 'between', [1, 2.5])],
    ['date between with dates and date-times', attr('birthday', 'between', ['1950-01-01', '2000-01-01T00:00:00+02:00'])],
    // A date stands for its whole day (ADR 0059): noon to that day's end is a range, not a reversed one.
    ['date between from a date-time to the whole day it falls on', attr('last_login', 'between', ['2024-01-01T12:00:00Z', '2024-01-01'])],
    ['before-date', attr('last_login', 'before-date', ['2024-02-29'])],
    ['in-last-days', attr('visits', 'in-last-days', [30])],
    ['boolean without values', attr('vip', 'is-true')],
    ['boolean with empty values', attr('vip', 'is-false', [])],
    ['is-set on any type', attr('birthday', 'is-set')],
    ['matches-string with an empty string', attr('city', 'matches-string', [''])],
  ])('%s', (_, node) => {
    expect(() => parse(node)).not.toThrow();
  });

  it('parses a group_event with timeframe, count and same-type children', () => {
    const node = parse({
      type: 'group_event',
      eventType: 'purchase',
      timeframe: { lastDays: 30 },
      count: { operator: 'at-least', value: 2 },
      negate: true,
      children: [{ type: 'event_condition', key: 'purchase.amount', operator: 'greater-than', values: [10] }],
    });
    expect(node).toMatchObject({ type: 'group_event', eventType: 'purchase', negate: true, count: { operator: 'at-least', value: 2 }, timeframe: { lastDays: 30 } });
    expect(node.type === 'group_event' && node.children[0]).toMatchObject({ eventType: 'purchase', parameter: 'amount', valueKind: 'number' });
  });

  it('accepts groups nested to the limit', () => {
    const deep = (n: number): unknown => (n === 0 ? attr('vip', 'is-true') : group([deep(n - 1)]));
    expect(() => parse(deep(AUDIENCE_FILTER_LIMITS.maxDepth))).not.toThrow();
  });

  it('resolves dotted event types and parameters: the longest event type wins', () => {
    expect(parse({ type: 'event_condition', key: 'page.view.url', operator: 'contains-string', values: ['x'] })).toMatchObject({ eventType: 'page.view', parameter: 'url' });
    expect(parse({ type: 'group_event', eventType: 'page', children: [{ type: 'event_condition', key: 'page.view.url', operator: 'is-set' }] })).toMatchObject({
      children: [{ eventType: 'page', parameter: 'view.url' }],
    });
  });

  it('accepts a from/to timeframe and a missing count', () => {
    expect(parse({ type: 'group_event', eventType: 'login', timeframe: { from: '2024-01-01', to: '2024-01-31T23:00:00Z' } })).toMatchObject({ timeframe: { from: '2024-01-01' } });
    // `to` as a date is inclusive of its whole day (ADR 0060), so it is not before a from later that day.
    expect(parse({ type: 'group_event', eventType: 'login', timeframe: { from: '2024-01-31T12:00:00+01:00', to: '2024-01-31' } })).toMatchObject({ timeframe: { to: '2024-01-31' } });
  });
});

describe('parseAudienceFilter: errors name the path and what is allowed', () => {
  const deep = (n: number): unknown => (n === 0 ? attr('vip', 'is-true') : group([deep(n - 1)]));
  it.each<[string, unknown, string, RegExp, string?]>([
    ['root not an object', 'x', 'root', /must be a filter node/],
    ['root an array', [], 'root', /not an array/],
    ['missing type', { children: [] }, 'root.type', /is required/, 'group'],
    ['unknown type', { type: 'segment' }, 'root.type', /unknown node type string "segment"/, 'group_event'],
    ['unknown field', { type: 'group', children: [], negated: true }, 'root.negated', /unknown field of a group node/, 'negate'],
    ['odd field name', { type: 'group', children: [], 'a b': 1 }, 'root["a b"]', /unknown field/],
    ['group operator', group([], { operator: 'xor' }), 'root.operator', /unknown group operator/, 'or'],
    ['negate not boolean', group([], { negate: 'yes' }), 'root.negate', /must be a boolean/],
    ['children missing', { type: 'group' }, 'root.children', /is required/],
    ['children not array', { type: 'group', children: {} }, 'root.children', /must be an array/],
    ['bad child', group([attr('vip', 'is-true'), attr('vip', 'is-true'), { type: 'nope' }]), 'root.children[2].type', /unknown node type/],
    ['unknown attribute', group([attr('town', 'matches-string', ['x'])]), 'root.children[0].key', /unknown attribute "town"/, 'city'],
    ['key not a string', attr(5 as unknown as string, 'is-set'), 'root.key', /must be a non-empty string/],
    ['unknown operator', group([attr('vip', 'is-true'), attr('vip', 'is-true'), attr('city', 'equals', ['x'])]), 'root.children[2].operator', /unknown operator string "equals"/, 'matches-string'],
    ['missing operator', attr('city', undefined as unknown as string), 'root.operator', /is required/, 'contains-string'],
    ['operator of another type', attr('score', 'contains-string', ['1']), 'root.operator', /does not apply to a number attribute/, 'greater-than'],
    ['boolean operator on a string', attr('city', 'is-true'), 'root.operator', /does not apply to a string attribute/, 'is-set'],
    ['values not an array', attr('city', 'matches-string', 'Paris' as unknown as unknown[]), 'root.values', /must be an array/],
    ['no values', attr('city', 'matches-string', []), 'root.values', /takes 1 to 500 values, not 0/],
    ['too many values', attr('city', 'matches-string', Array(501).fill('x')), 'root.values', /not 501/],
    ['one-value operator with two', attr('score', 'greater-than', [1, 2]), 'root.values', /exactly 1 value, not 2/],
    ['between with one', attr('score', 'between', [1]), 'root.values', /exactly 2 values/],
    ['between reversed', attr('score', 'between', [3, 1]), 'root.values', /must not be above/],
    ['date between reversed', attr('birthday', 'between', ['2024-01-02', '2024-01-01']), 'root.values', /must not be above/],
    ['date between from a date-time after the whole day', attr('last_login', 'between', ['2024-01-02T00:00:00Z', '2024-01-01']), 'root.values', /must not be above/],
    ['flag operator with values', attr('vip', 'is-true', [true]), 'root.values', /takes no values, not 1/],
    ['number for a string', attr('city', 'matches-string', ['a', 5]), 'root.values[1]', /must be a string, not number 5/],
    ['string for a number', attr('score', 'equals-number', ['5']), 'root.values[0]', /must be a number, not string "5"/],
    ['infinite-ish number', attr('score', 'equals-number', [null]), 'root.values[0]', /must be a number, not null/],
    ['bad date', attr('birthday', 'before-date', ['2024-02-30']), 'root.values[0]', /ISO date/],
    ['date-time without offset', attr('last_login', 'after-date', ['2024-02-01T10:00:00']), 'root.values[0]', /ISO 8601 date-time with an offset/],
    ['in-last-days not integer', attr('last_login', 'in-last-days', [1.5]), 'root.values[0]', /whole number of days/],
    ['in-last-days zero', attr('last_login', 'in-last-days', [0]), 'root.values[0]', /whole number of days/],
    ['empty contains', attr('city', 'contains-string', ['']), 'root.values[0]', /non-empty string/],
    ['long string', attr('city', 'matches-string', ['x'.repeat(2049)]), 'root.values[0]', /at most 2048 characters/],
    ['lone surrogate', attr('city', 'matches-string', ['a\uD800b']), 'root.values[0]', /lone surrogate/],
    ['unknown event type', { type: 'group_event', eventType: 'buy' }, 'root.eventType', /unknown event type "buy"/, 'purchase'],
    ['missing event type', { type: 'group_event' }, 'root.eventType', /is required/],
    ['group_event child of another kind', { type: 'group_event', eventType: 'purchase', children: [attr('vip', 'is-true')] }, 'root.children[0].type', /cannot stand here/, 'event_condition'],
    [
      'group_event child of another event type',
      { type: 'group_event', eventType: 'purchase', children: [{ type: 'event_condition', key: 'login.x', operator: 'is-set' }] },
      'root.children[0].key',
      /is not a parameter of purchase/,
      'purchase.amount',
    ],
    ['unknown parameter', { type: 'event_condition', key: 'purchase.colour', operator: 'is-set' }, 'root.key', /unknown parameter of purchase/, 'purchase.gift'],
    ['key without an event type', { type: 'event_condition', key: 'amount', operator: 'is-set' }, 'root.key', /<eventType>.<parameter>/, 'purchase.amount'],
    ['parameter operator of another type', { type: 'event_condition', key: 'purchase.gift', operator: 'greater-than', values: [1] }, 'root.operator', /does not apply to a boolean parameter/, 'is-true'],
    ['parameter value type', { type: 'event_condition', key: 'purchase.amount', operator: 'less-than', values: ['1'] }, 'root.values[0]', /must be a number/],
    ['timeframe both forms', { type: 'group_event', eventType: 'login', timeframe: { lastDays: 3, from: '2024-01-01' } }, 'root.timeframe.from', /not both/],
    ['timeframe empty', { type: 'group_event', eventType: 'login', timeframe: {} }, 'root.timeframe', /needs lastDays/, 'from'],
    ['timeframe unknown field', { type: 'group_event', eventType: 'login', timeframe: { since: '2024-01-01' } }, 'root.timeframe.since', /unknown timeframe field/, 'lastDays'],
    ['timeframe lastDays', { type: 'group_event', eventType: 'login', timeframe: { lastDays: -1 } }, 'root.timeframe.lastDays', /whole number of days/],
    ['timeframe bad date', { type: 'group_event', eventType: 'login', timeframe: { from: 'yesterday' } }, 'root.timeframe.from', /ISO date/],
    ['timeframe reversed', { type: 'group_event', eventType: 'login', timeframe: { from: '2024-02-01', to: '2024-01-01' } }, 'root.timeframe.to', /must not be before from/],
    ['timeframe from a date-time after the whole to day', { type: 'group_event', eventType: 'login', timeframe: { from: '2024-01-01T23:00:00-01:00', to: '2024-01-01' } }, 'root.timeframe.to', /must not be before from/],
    ['count operator', { type: 'group_event', eventType: 'login', count: { operator: 'more-than', value: 1 } }, 'root.count.operator', /unknown count operator/, 'at-most'],
    ['count value', { type: 'group_event', eventType: 'login', count: { operator: 'exactly', value: -1 } }, 'root.count.value', /whole number from 0/],
    ['count extra field', { type: 'group_event', eventType: 'login', count: { operator: 'exactly', value: 1, unit: 'x' } }, 'root.count.unit', /unknown count field/],
    ['too deep', deep(AUDIENCE_FILTER_LIMITS.maxDepth + 1), `root${'.children[0]'.repeat(AUDIENCE_FILTER_LIMITS.maxDepth)}`, /nest at most 10 deep/],
    ['too many children', group(Array(101).fill(attr('vip', 'is-true'))), 'root.children', /at most 100 children, not 101/],
    [
      'too many nodes',
      group(Array(3).fill(group(Array(100).fill(attr('vip', 'is-true'))))),
      'root.children[1].children[97]',
      /more than 200 nodes/,
    ],
    [
      'too much text',
      group(Array(30).fill(attr('city', 'matches-string', Array(1).fill('x'.repeat(2000))))),
      'root.children[25].values[0]',
      /total more than 50000 characters/,
    ],
    // A rest parameter: with 5 named ones Jest would pass `done` to rows of 4.
  ])('%s', (...row) => {
    const [, root, path, message, allowedItem] = row;
    const err = errorOf(root);
    expect(err.path).toBe(path);
    expect(err.message).toMatch(message);
    expect(err.message.startsWith(`${path}: `)).toBe(true);
    expect(err.statusCode).toBe(400);
    if (allowedItem) {
      expect(err.allowed).toContain(allowedItem);
      expect(err.message).toContain('allowed: ');
      expect(err.details).toEqual({ path, allowed: err.allowed });
    }
  });

  it('truncates long allowed lists in the message', () => {
    const attributes = Array.from({ length: 150 }, (_, i) => ({ uid: `a${i}`, type: 'string' as const, multivalue: false }));
    let err: AudienceFilterError | undefined;
    try {
      parseAudienceFilter(attr('zzz', 'is-set'), { attributes, eventTypes: [] });
    } catch (e) {
      err = e as AudienceFilterError;
    }
    expect(err?.message).toContain('a19, … (130 more)');
    expect(err?.allowed).toHaveLength(100);
  });

  it('uses the given path prefix', () => {
    expect(() => parseAudienceFilter({ type: 'x' }, TEST_CATALOGUE, 'body.root')).toThrow(/^body\.root\.type: /);
  });
});

describe('parseAudienceFilterVersion', () => {
  it('accepts 0.0.1 and absence, refuses anything else naming the version', () => {
    expect(() => parseAudienceFilterVersion(undefined)).not.toThrow();
    expect(() => parseAudienceFilterVersion('0.0.1')).not.toThrow();
    expect(() => parseAudienceFilterVersion('0.0.2')).toThrow(/^version: unsupported filter version string "0.0.2"; allowed: 0.0.1$/);
    expect(() => parseAudienceFilterVersion(1)).toThrow(AudienceFilterError);
  });
});

describe('parseAudienceFilter: names of Object.prototype members (ADR 0124)', () => {
  it('are unknown attributes, event types, parameters, operators and node fields: errors naming them, never a crash', () => {
    for (const name of PROTOTYPE_NAMES) {
      expect(errorOf(group([attr(name, 'is-set')])).path).toBe('root.children[0].key');
      expect(errorOf(group([attr('city', name, ['x'])])).path).toBe('root.children[0].operator');
      expect(errorOf(group([{ type: 'event_condition', key: `${name}.x`, operator: 'is-set' }])).path).toBe('root.children[0].key');
      expect(errorOf(group([{ type: 'event_condition', key: `purchase.${name}`, operator: 'is-set' }])).path).toBe('root.children[0].key');
      expect(errorOf(group([{ ...attr('city', 'is-set'), [name]: 1 }])).path).toBe(`root.children[0].${name}`);
      expect(errorOf({ type: name }).path).toBe('root.type');
    }
  });
});

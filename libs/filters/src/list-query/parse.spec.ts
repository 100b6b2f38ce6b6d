import type { ListQuery } from './ast';
import { ListQueryError } from './errors';
import { CONDITION_OPERATORS, OPERATORS_BY_TYPE } from './operators';
import { parseListQuery } from './parse';
import { ITEMS } from '../../test/list-query/test-resource';

const url = (query: string) => parseListQuery(query, ITEMS);
const q = (json: unknown) => parseListQuery(new URLSearchParams({ _q: JSON.stringify(json) }), ITEMS);
const DEFAULT = { sort: [], paging: { start: 0, limit: 50 }, group: null };

/** Parses the URL form and the `_q` form and expects the one query. */
function both(urlQuery: string, json: unknown): ListQuery {
  const fromUrl = url(urlQuery);
  expect(q(json)).toEqual(fromUrl);
  return fromUrl;
}

function refusal(parse: () => unknown): { parameter: string; message: string; allowed?: readonly string[] } {
  try {
    parse();
  } catch (e) {
    if (e instanceof ListQueryError) return { parameter: e.parameter, message: e.message, ...(e.allowed ? { allowed: e.allowed } : {}) };
    throw e;
  }
  throw new Error('expected a ListQueryError');
}

const cond = (field: string, operator: string, value: unknown) => ({ field, operator, value });
/** `n` and/or nodes, each inside the last, around one condition. */
const nestOr = (n: number): unknown => (n === 0 ? cond('name', 'eq', 'a') : { operator: n % 2 ? 'or' : 'and', value: [nestOr(n - 1), cond('score', 'gt', n)] });

describe('list query: both forms parse into one query', () => {
  // [operator, field, URL value, _q value, value in the query]
  const cases: Array<[string, string, string, unknown, unknown]> = [
    ['exists', 'name', 'true', true, true],
    ['exists', 'score', 'false', 'false', false],
    ['eq', 'name', 'Ada', 'Ada', 'Ada'],
    ['eq', 'name', 'a|b', 'a|b', 'a|b'],
    ['eq', 'score', '3', 3, 3],
    ['eq', 'score', '-1.5e2', '-1.5e2', -150],
    ['eq', 'active', 'true', true, true],
    ['eqi', 'name', 'ADA', 'ADA', 'ADA'],
    ['ne', 'active', 'false', false, false],
    ['nei', 'name', 'x', 'x', 'x'],
    ['lt', 'score', '10', 10, 10],
    ['lte', 'createdAt', '2024-05-01T10:00:00+02:00', '2024-05-01T10:00:00+02:00', { at: '2024-05-01T10:00:00.000000+02:00' }],
    ['gt', 'createdAt', '2024-05-01T10:00:00.123456', '2024-05-01T10:00:00.123456', { at: '2024-05-01T10:00:00.123456+00:00' }],
    ['gte', 'createdAt', '3 day ago', '3 day ago', { ago: { amount: 3, period: 'day' } }],
    ['in', 'name', 'a|b|c', ['a', 'b', 'c'], ['a', 'b', 'c']],
    ['in', 'score', '1|2', [1, '2'], [1, 2]],
    ['ini', 'name', 'A', ['A'], ['A']],
    ['nin', 'name', 'a\\|b|c', ['a|b', 'c'], ['a|b', 'c']],
    ['nini', 'name', 'a|B', ['a', 'B'], ['a', 'B']],
    ['contains', 'name', 'da', 'da', 'da'],
    ['contains', 'name', 'da|x', ['da', 'x'], ['da', 'x']],
    ['containsi', 'name', 'DA', ['DA'], 'DA'],
    ['ncontains', 'name', 'z', 'z', 'z'],
    ['ncontainsi', 'name', 'Z|Y', ['Z', 'Y'], ['Z', 'Y']],
    ['starts', 'name', 'A', 'A', 'A'],
    ['startsi', 'name', 'a', 'a', 'a'],
    ['ends', 'name', 'a', 'a', 'a'],
    ['endsi', 'name', 'A', 'A', 'A'],
    ['range', 'score', '1|5', [1, 5], [1, 5]],
    ['between', 'createdAt', '1 year ago|2 months ago', ['1 year ago', '2 months ago'], [{ ago: { amount: 1, period: 'year' } }, { ago: { amount: 2, period: 'month' } }]],
    ['betweeneq', 'score', '0|0.5', ['0', 0.5], [0, 0.5]],
  ];

  it('covers every operator of the spec', () => {
    expect(new Set(cases.map(([op]) => op))).toEqual(new Set(CONDITION_OPERATORS));
  });

  it.each(cases)('%s on %s: URL %p and _q %p', (operator, field, urlValue, qValue, value) => {
    const parsed = both(`${field}_${operator}=${encodeURIComponent(urlValue)}`, { filter: [cond(field, operator, qValue)] });
    expect(parsed).toEqual({ filter: { field: [field], operator, value }, ...DEFAULT });
  });

  it('nested fields: * in the URL form, . in _q; json keys compare as text, ordered operators as numbers', () => {
    expect(both('attributes*drink_eq=beer', { filter: [cond('attributes.drink', 'eq', 'beer')] }).filter).toEqual({ field: ['attributes', 'drink'], operator: 'eq', value: 'beer' });
    expect(both('attributes*age_eq=3', { filter: [cond('attributes.age', 'eq', 3)] }).filter).toEqual({ field: ['attributes', 'age'], operator: 'eq', value: '3' });
    expect(both('attributes*age_gt=3', { filter: [cond('attributes.age', 'gt', '3')] }).filter).toEqual({ field: ['attributes', 'age'], operator: 'gt', value: 3 });
    expect(both('tags*label_eq=vip', { filter: [cond('tags.label', 'eq', 'vip')] }).filter).toEqual({ field: ['tags', 'label'], operator: 'eq', value: 'vip' });
  });

  it('different parameters AND, a repeated parameter ORs; _q and/or nest and flatten alike', () => {
    const parsed = both('name_eq=a&score_gt=1&name_eq=b', {
      filter: [{ field: '', operator: 'or', value: [cond('name', 'eq', 'a'), cond('name', 'eq', 'b')] }, cond('score', 'gt', 1)],
    });
    expect(parsed.filter).toEqual({
      operator: 'and',
      children: [
        { operator: 'or', children: [{ field: ['name'], operator: 'eq', value: 'a' }, { field: ['name'], operator: 'eq', value: 'b' }] },
        { field: ['score'], operator: 'gt', value: 1 },
      ],
    });
    // An "and" inside the top-level AND, and a one-child "or", change nothing.
    expect(q({ filter: [{ field: '', operator: 'and', value: [{ operator: 'or', value: [cond('name', 'eq', 'a'), cond('name', 'eq', 'b')] }, cond('score', 'gt', 1)] }] })).toEqual(parsed);
    expect(q({ filter: [{ operator: 'or', value: [cond('score', 'gt', 1)] }] }).filter).toEqual({ field: ['score'], operator: 'gt', value: 1 });
  });

  it('_q takes and/or nested exactly 5 deep (the limit, ADR 0055)', () => {
    expect(q({ filter: [nestOr(5)] }).filter).toMatchObject({ operator: 'or' });
  });

  it('_sort with :- and :+, _start with _limit, _group', () => {
    expect(url('_sort=score:+').sort).toEqual([{ field: ['score'], direction: 'asc' }]);
    const parsed = both('_sort=name:-,score:%2B,attributes*x&_start=20&_limit=10&_group=daily', {
      sort: [
        ['name', 'desc'],
        ['score', 'asc'],
        ['attributes.x', 'asc'],
      ],
      paging: { start: 20, limit: 10 },
      group: 'daily',
    });
    expect(parsed).toEqual({
      filter: null,
      sort: [
        { field: ['name'], direction: 'desc' },
        { field: ['score'], direction: 'asc' },
        { field: ['attributes', 'x'], direction: 'asc' },
      ],
      paging: { start: 20, limit: 10 },
      group: 'daily',
    });
  });

  it('nothing sent: no filter, the default page (50), no group', () => {
    expect(url('')).toEqual({ filter: null, ...DEFAULT });
    expect(q({})).toEqual({ filter: null, ...DEFAULT });
  });
});

describe('list query: dates', () => {
  const at = (text: string) => url(`createdAt_gt=${encodeURIComponent(text)}`).filter;
  it.each([
    ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00.000000+00:00'],
    ['2024-05-01T10:00:00.5-05:30', '2024-05-01T10:00:00.500000-05:30'],
    ['2024-05-01T10:00+0200', '2024-05-01T10:00:00.000000+02:00'],
    ['2024-02-29T00:00:00.000001', '2024-02-29T00:00:00.000001+00:00'],
    // `+` unencoded in a query string reads as a space.
    ['2024-05-01T10:00:00 02:00', '2024-05-01T10:00:00.000000+02:00'],
  ])('%s is the instant %s', (text, normalised) => expect(at(text)).toMatchObject({ value: { at: normalised } }));

  it.each([
    ['1 second ago', 1, 'second'],
    ['10 minutes ago', 10, 'minute'],
    ['2 HOURS AGO', 2, 'hour'],
    ['3 day ago', 3, 'day'],
    ['6 months ago', 6, 'month'],
    ['1 year ago', 1, 'year'],
  ])('%s is relative', (text, amount, period) => expect(at(text)).toMatchObject({ value: { ago: { amount, period } } }));

  it.each(['2024-05-01T10:00:00', '2024-05-01', '2023-02-29T00:00:00Z', '2024-13-01T00:00:00Z', '2024-05-01T24:00:00Z', '2024-05-01T10:00:00+16:00', '3 weeks ago', 'yesterday', '1001 years ago', '2024-05-01T10:00:00.1234567Z'])(
    '%s is refused, listing the accepted forms',
    (text) => {
      expect(refusal(() => at(text))).toMatchObject({ parameter: 'createdAt_gt', allowed: expect.arrayContaining([expect.stringContaining('ISO 8601')]) });
    },
  );
});

describe('list query: refusals name the parameter', () => {
  it.each([
    ['nam_eq=x', 'nam_eq', /no field "nam"/],
    ['name_eqq=x', 'name_eqq', /unknown operator "eqq"/],
    ['name_lt=x', 'name_lt', /"lt" does not apply to string field "name"/],
    ['active_gt=true', 'active_gt', /does not apply to boolean/],
    ['createdAt_in=1 day ago', 'createdAt_in', /does not apply to date/],
    ['score_eq=abc', 'score_eq', /not a finite number/],
    ['score_eq=1e999', 'score_eq', /not a finite number/],
    ['active_eq=yes', 'active_eq', /not a boolean/],
    ['name_exists=maybe', 'name_exists', /not a boolean/],
    ['score_range=1', 'score_range', /two values/],
    ['score_between=1|2|3', 'score_between', /two values/],
    ['name=x', 'name', /<field>_<operator>/],
    ['_foo=1', '_foo', /unknown parameter/],
    ['attributes_eq=x', 'attributes_eq', /no field "attributes"/],
    ['attributes**x_eq=1', 'attributes**x_eq', /empty path segment/],
    ['attributes*a b_eq=1', 'attributes*a b_eq', /no field/],
    ['_start=0', '_limit', /go together/],
    ['_limit=10', '_start', /go together/],
    ['_start=-1&_limit=10', '_start', /integer/],
    ['_start=0&_limit=0', '_limit', /from 1 to 1000/],
    ['_start=0&_limit=1001', '_limit', /from 1 to 1000/],
    ['_sort=active', '_sort', /cannot be sorted by "active"/],
    ['_sort=name,name:-', '_sort', /twice/],
    ['_sort=name:x', '_sort', /cannot be sorted/],
    ['_sort=,name', '_sort', /not <field>/],
    ['_group=daily&_group=hourly', '_group', /more than once/],
    ['_group=fortnightly', '_group', /unknown grouping/],
    [`name_eq=${'x'.repeat(1001)}`, 'name_eq', /longer than 1000/],
    ['name_eq=a%00b', 'name_eq', /NUL/],
    [`name_in=${Array.from({ length: 101 }, (_, i) => i).join('|')}`, 'name_in', /at most 100/],
    ['_q={}&name_eq=x', 'name_eq', /_q carries the whole query/],
  ])('%s → %s', (query, parameter, message) => {
    const r = refusal(() => url(query));
    expect(r.parameter).toBe(parameter);
    expect(r.message).toMatch(message);
  });

  it('lists what is allowed: fields by the form written, operators of the field type, groupings', () => {
    expect(refusal(() => url('nope_eq=1')).allowed).toEqual(['id', 'name', 'score', 'createdAt', 'active', 'tags*label', 'attributes*<key>']);
    expect(refusal(() => q({ filter: [cond('nope', 'eq', 1)] })).allowed).toContain('tags.label');
    expect(refusal(() => url('active_lt=1')).allowed).toEqual(OPERATORS_BY_TYPE.boolean);
    expect(refusal(() => url('_sort=nope')).allowed).toEqual(['id', 'name', 'score', 'createdAt', 'attributes*<key>']);
    expect(refusal(() => url('_group=x')).allowed).toEqual(['hourly', 'daily', 'weekly', 'monthly', 'yearly']);
  });

  it('a resource without a group field refuses _group, saying so', () => {
    const r = refusal(() => parseListQuery('_group=daily', { ...ITEMS, group: undefined }));
    expect(r).toMatchObject({ parameter: '_group', message: '_group: items do not group' });
  });

  it.each([
    ['not json', '_q', /not JSON/],
    [[], '_q', /JSON object/],
    [{ filters: [] }, '_q.filters', /unknown key/],
    [{ filter: {} }, '_q.filter', /array/],
    [{ filter: [cond('name', 'eq', 'a'), cond('name', 'eqq', 'a')] }, '_q.filter[1].operator', /unknown operator/],
    [{ filter: [cond('nope', 'eq', 'a')] }, '_q.filter[0].field', /no field/],
    [{ filter: [cond('score', 'eq', 'x')] }, '_q.filter[0].value', /finite number/],
    [{ filter: [cond('score', 'in', [1, 'x'])] }, '_q.filter[0].value[1]', /finite number/],
    [{ filter: [cond('score', 'in', 1)] }, '_q.filter[0].value', /array/],
    [{ filter: [cond('name', 'eq', ['a'])] }, '_q.filter[0].value', /one value/],
    [{ filter: [cond('name', 'eq', 1)] }, '_q.filter[0].value', /must be a string/],
    [{ filter: [{ field: 'name', operator: 'eq' }] }, '_q.filter[0].value', /required/],
    [{ filter: [{ field: 'name', operator: 'eq', value: 'a', extra: 1 }] }, '_q.filter[0].extra', /unknown key/],
    [{ filter: [{ field: 'name', operator: 'or', value: [] }] }, '_q.filter[0].field', /must be empty/],
    [{ filter: [{ field: '', operator: 'or', value: [] }] }, '_q.filter[0].value', /at least one/],
    [{ filter: [{ field: '', operator: 'and', value: [cond('', 'eq', 1)] }] }, '_q.filter[0].value[0].field', /required/],
    [{ filter: [{ field: '', operator: 'and', value: [cond('x..y', 'eq', 1)] }] }, '_q.filter[0].value[0].field', /empty path segment/],
    [{ filter: [nestOr(6)] }, '_q.filter[0].value[0].value[0].value[0].value[0].value[0].value', /at most 5 deep/],
    [{ paging: { start: 0 } }, '_q.paging.limit', /go together/],
    [{ paging: { start: 1.5, limit: 1 } }, '_q.paging.start', /integer/],
    [{ paging: { start: 0, limit: 5000 } }, '_q.paging.limit', /from 1 to 1000/],
    [{ sort: [['name']] }, '_q.sort[0]', /\[field, direction\]/],
    [{ sort: [['name', 'down']] }, '_q.sort[0][1]', /direction/],
    [{ sort: [['active', 'asc']] }, '_q.sort[0][0]', /cannot be sorted/],
    [{ group: 1 }, '_q.group', /string/],
    [{ filter: Array.from({ length: 101 }, () => cond('name', 'eq', 'a')) }, '_q.filter[100].field', /at most 100 conditions/],
  ])('_q %j → %s', (json, parameter, message) => {
    const r = refusal(() => parseListQuery(new URLSearchParams({ _q: typeof json === 'string' ? json : JSON.stringify(json) }), ITEMS));
    expect(r.parameter).toBe(parameter);
    expect(r.message).toMatch(message);
  });

  it('field names such as __proto__ or constructor are unknown fields, not prototype properties', () => {
    expect(refusal(() => url('__proto___eq=1')).parameter).toBe('__proto___eq');
    expect(refusal(() => url('constructor_eq=1')).parameter).toBe('constructor_eq');
    expect(refusal(() => q({ filter: [cond('toString', 'eq', 'x')] })).parameter).toBe('_q.filter[0].field');
    expect(refusal(() => url('_group=toString')).parameter).toBe('_group');
  });
});

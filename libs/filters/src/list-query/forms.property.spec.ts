import { PROTOTYPE_NAMES } from '@meld/testing';
import fc from 'fast-check';
import { compileListQuery } from './compile';
import { type ConditionOperator, GROUP_TOKENS, OPERATORS_BY_TYPE, VALUE_SHAPE } from './operators';
import { parseListQuery } from './parse';
import { ListQueryError } from './errors';
import { ITEMS } from '../../test/list-query/test-resource';
import { joinList } from './url-form';

// The spec's promise: the URL form and `_q` are two spellings of one query. Random queries
// are written both ways; both must parse into the same ListQuery and compile to the same
// SQL and parameters.

type Kind = 'string' | 'number' | 'date' | 'boolean' | 'json';
const FIELDS: Array<{ path: string[]; kind: Kind }> = [
  { path: ['id'], kind: 'string' },
  { path: ['name'], kind: 'string' },
  { path: ['score'], kind: 'number' },
  { path: ['createdAt'], kind: 'date' },
  { path: ['active'], kind: 'boolean' },
  { path: ['tags', 'label'], kind: 'string' },
  { path: ['attributes', 'drink'], kind: 'json' },
  { path: ['attributes', 'a_b', 'c-d'], kind: 'json' },
  // Keys named like Object.prototype members are data (ADR 0124).
  ...PROTOTYPE_NAMES.map((name) => ({ path: ['attributes', name], kind: 'json' as const })),
];

/** A value written both ways: URL text and JSON. */
interface Written {
  text: string;
  json: unknown;
}

const text = fc.string({ maxLength: 12, unit: 'grapheme' }).filter((s) => !s.includes('\u0000'));
const number = fc.oneof(fc.integer({ min: -1e6, max: 1e6 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 })).map((n) => (Object.is(n, -0) ? 0 : n));
const date = fc.oneof(
  fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.tuple(fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2030-01-01T00:00:00Z'), noInvalidDate: true }), fc.integer({ min: 0, max: 999 })).map(([d, us]) => `${d.toISOString().slice(0, 23)}${String(us).padStart(3, '0')}`),
  fc.tuple(fc.integer({ min: 0, max: 500 }), fc.constantFrom('second', 'minute', 'hour', 'day', 'month', 'year'), fc.boolean()).map(([n, p, plural]) => `${n} ${p}${plural ? 's' : ''} ago`),
);

function scalar(kind: Kind, ordered: boolean): fc.Arbitrary<Written> {
  if (kind === 'number' || (kind === 'json' && ordered)) return number.map((n) => ({ text: String(n), json: n }));
  if (kind === 'date') return date.map((d) => ({ text: d, json: d }));
  if (kind === 'boolean') return fc.boolean().map((b) => ({ text: String(b), json: b }));
  return text.map((s) => ({ text: s, json: s }));
}

function value(kind: Kind, operator: ConditionOperator): fc.Arbitrary<Written> {
  const shape = VALUE_SHAPE[operator];
  const ordered = ['lt', 'lte', 'gt', 'gte', 'range', 'between', 'betweeneq'].includes(operator);
  if (shape === 'flag') return fc.boolean().map((b) => ({ text: String(b), json: b }));
  if (shape === 'scalar') return scalar(kind, ordered);
  const [min, max] = shape === 'pair' ? [2, 2] : [1, 4];
  return fc.array(scalar(kind, ordered), { minLength: min, maxLength: max }).map((items) => ({ text: joinList(items.map((i) => i.text)), json: items.map((i) => i.json) }));
}

const condition = fc
  .constantFrom(...FIELDS)
  .chain((f) => fc.constantFrom(...OPERATORS_BY_TYPE[f.kind]).map((operator) => ({ ...f, operator })))
  .chain((c) => fc.array(value(c.kind, c.operator), { minLength: 1, maxLength: 3 }).map((values) => ({ ...c, values })));

const sortable = FIELDS.filter((f) => f.kind !== 'boolean' && f.path[0] !== 'tags');
const query = fc.record({
  groups: fc.uniqueArray(condition, { maxLength: 5, selector: (c) => `${c.path.join('.')}_${c.operator}` }),
  sort: fc.uniqueArray(fc.tuple(fc.constantFrom(...sortable), fc.constantFrom('asc', 'desc', 'default')), { maxLength: 3, selector: ([f]) => f.path.join('.') }),
  paging: fc.option(fc.record({ start: fc.integer({ min: 0, max: 1e6 }), limit: fc.integer({ min: 1, max: 1000 }) }), { nil: undefined }),
  group: fc.option(fc.constantFrom(...Object.keys(GROUP_TOKENS)), { nil: undefined }),
});

type Query = typeof query extends fc.Arbitrary<infer T> ? T : never;

function asUrl(q: Query): URLSearchParams {
  const params = new URLSearchParams();
  for (const g of q.groups) for (const v of g.values) params.append(`${g.path.join('*')}_${g.operator}`, v.text);
  if (q.sort.length) params.set('_sort', q.sort.map(([f, d]) => `${f.path.join('*')}${d === 'desc' ? ':-' : d === 'asc' ? ':+' : ''}`).join(','));
  if (q.paging) {
    params.set('_start', String(q.paging.start));
    params.set('_limit', String(q.paging.limit));
  }
  if (q.group) params.set('_group', q.group);
  return params;
}

function asQ(q: Query): URLSearchParams {
  const conditions = q.groups.map((g) => {
    const each = g.values.map((v) => ({ field: g.path.join('.'), operator: g.operator, value: v.json }));
    return each.length === 1 ? each[0] : { field: '', operator: 'or', value: each };
  });
  const json = {
    ...(conditions.length ? { filter: conditions } : {}),
    ...(q.sort.length ? { sort: q.sort.map(([f, d]) => [f.path.join('.'), d === 'desc' ? 'desc' : 'asc']) } : {}),
    ...(q.paging ? { paging: q.paging } : {}),
    ...(q.group ? { group: q.group } : {}),
  };
  // Sent through a real query string, as a client would.
  return new URLSearchParams(new URLSearchParams({ _q: JSON.stringify(json) }).toString());
}

describe('list query forms (property)', () => {
  it('refuses fields and operators named like Object.prototype members with an error naming them (ADR 0124)', () => {
    for (const name of PROTOTYPE_NAMES) {
      for (const input of [`${name}_eq=1`, `name_${name}=1`, `_sort=${name}`, `${name}=1`]) expect(() => parseListQuery(input, ITEMS)).toThrow(ListQueryError);
      const q = new URLSearchParams({ _q: JSON.stringify({ filter: [{ field: name, operator: 'eq', value: 1 }], sort: [[name, 'asc']] }) });
      expect(() => parseListQuery(q, ITEMS)).toThrow(ListQueryError);
      expect(() => parseListQuery(new URLSearchParams({ _q: `{"${name}":1}` }), ITEMS)).toThrow(ListQueryError);
      expect(() => parseListQuery(`_group=${name}`, ITEMS)).toThrow(ListQueryError);
    }
  });

  it('the URL form and _q of the same random query give the same query, SQL and parameters', () => {
    fc.assert(
      fc.property(query, (q) => {
        const fromUrl = parseListQuery(new URLSearchParams(asUrl(q).toString()), ITEMS);
        const fromQ = parseListQuery(asQ(q), ITEMS);
        expect(fromQ).toEqual(fromUrl);
        expect(compileListQuery(fromQ, ITEMS, ['p'])).toEqual(compileListQuery(fromUrl, ITEMS, ['p']));
      }),
      { numRuns: 500 },
    );
  });
});

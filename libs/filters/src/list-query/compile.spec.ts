import { compileListQuery } from './compile';
import { parseListQuery } from './parse';
import { ITEMS } from '../../test/list-query/test-resource';

const compile = (query: string, base: unknown[] = ['project-id']) => compileListQuery(parseListQuery(query, ITEMS), ITEMS, base);
const where = (query: string) => {
  const c = compile(query, []);
  return { sql: c.where, params: c.params.slice(0, -2) };
};

describe('list query → Postgres SQL with bound parameters', () => {
  it.each([
    ['name_exists=true', 't.name IS NOT NULL', []],
    ['name_exists=false', 'NOT coalesce(t.name IS NOT NULL, false)', []],
    ['name_eq=Ada', 't.name = $1::text', ['Ada']],
    ['name_eqi=Ada', 'lower((t.name) COLLATE "und-x-icu") = lower(($1::text) COLLATE "und-x-icu")', ['Ada']],
    ['name_ne=Ada', 'NOT coalesce(t.name = $1::text, false)', ['Ada']],
    ['name_nei=Ada', 'NOT coalesce(lower((t.name) COLLATE "und-x-icu") = lower(($1::text) COLLATE "und-x-icu"), false)', ['Ada']],
    ['score_lt=1', 't.score < $1::numeric', [1]],
    ['score_lte=1', 't.score <= $1::numeric', [1]],
    ['score_gt=1', 't.score > $1::numeric', [1]],
    ['score_gte=1', 't.score >= $1::numeric', [1]],
    ['score_in=1|2', 't.score IN ($1::numeric, $2::numeric)', [1, 2]],
    ['name_ini=a|B', 'lower((t.name) COLLATE "und-x-icu") IN (lower(($1::text) COLLATE "und-x-icu"), lower(($2::text) COLLATE "und-x-icu"))', ['a', 'B']],
    ['score_nin=1', 'NOT coalesce(t.score IN ($1::numeric), false)', [1]],
    ['name_nini=a', 'NOT coalesce(lower((t.name) COLLATE "und-x-icu") IN (lower(($1::text) COLLATE "und-x-icu")), false)', ['a']],
    ['name_contains=a|b', '(strpos(t.name, $1::text) > 0 OR strpos(t.name, $2::text) > 0)', ['a', 'b']],
    ['name_containsi=a', 'strpos(lower((t.name) COLLATE "und-x-icu"), lower(($1::text) COLLATE "und-x-icu")) > 0', ['a']],
    ['name_ncontains=a|b', 'NOT coalesce((strpos(t.name, $1::text) > 0 OR strpos(t.name, $2::text) > 0), false)', ['a', 'b']],
    ['name_ncontainsi=a', 'NOT coalesce(strpos(lower((t.name) COLLATE "und-x-icu"), lower(($1::text) COLLATE "und-x-icu")) > 0, false)', ['a']],
    ['name_starts=a', 'starts_with(t.name, $1::text)', ['a']],
    ['name_startsi=a', 'starts_with(lower((t.name) COLLATE "und-x-icu"), lower(($1::text) COLLATE "und-x-icu"))', ['a']],
    ['name_ends=a', 'right(t.name, length($1::text)) = $1::text', ['a']],
    ['name_endsi=a', 'right(lower((t.name) COLLATE "und-x-icu"), length(lower(($1::text) COLLATE "und-x-icu"))) = lower(($1::text) COLLATE "und-x-icu")', ['a']],
    ['score_range=1|5', '(t.score >= $1::numeric AND t.score < $2::numeric)', [1, 5]],
    ['score_between=1|5', '(t.score > $1::numeric AND t.score < $2::numeric)', [1, 5]],
    ['score_betweeneq=1|5', '(t.score >= $1::numeric AND t.score <= $2::numeric)', [1, 5]],
    ['active_eq=true', 't.active = $1::boolean', [true]],
    ['createdAt_gt=2024-05-01T10:00:00Z', 't.created_at > $1::timestamptz', ['2024-05-01T10:00:00.000000+00:00']],
    ['createdAt_gt=3 day ago', 't.created_at > (now() - $1::interval)', ['3 day']],
    [
      'attributes*drink_eq=beer',
      '(t.attributes #>> $1::text[]) = $2::text',
      [['drink'], 'beer'],
    ],
    [
      'attributes*a*b_gt=2',
      "(CASE WHEN jsonb_typeof(t.attributes #> $1::text[]) = 'number' THEN (t.attributes #>> $1::text[])::numeric END) > $2::numeric",
      [['a', 'b'], 2],
    ],
    ['attributes*x_exists=true', "coalesce(jsonb_typeof(t.attributes #> $1::text[]), 'null') <> 'null'", [['x']]],
    ['tags*label_eq=vip', 'EXISTS (SELECT 1 FROM list_query_tags g WHERE g.item_id = t.id AND g.label = $1::text)', ['vip']],
    ['tags*label_ne=vip', 'NOT coalesce(EXISTS (SELECT 1 FROM list_query_tags g WHERE g.item_id = t.id AND g.label = $1::text), false)', ['vip']],
    ['name_eq=a&name_eq=b&score_gt=1', '((t.name = $1::text OR t.name = $2::text) AND t.score > $3::numeric)', ['a', 'b', 1]],
  ])('%s → %s', (query, sql, params) => {
    expect(where(query)).toEqual({ sql, params });
  });

  it("numbers its parameters after the caller's; caller text never reaches the SQL", () => {
    const c = compile("name_eq=x'; DROP TABLE items; --&_sort=name:-&_start=10&_limit=5");
    expect(c).toEqual({
      where: 't.name = $2::text',
      orderBy: 't.name DESC NULLS LAST, t.id ASC',
      limit: '$3::int',
      offset: '$4::int',
      group: null,
      params: ['project-id', "x'; DROP TABLE items; --", 5, 10],
      filterParams: ['project-id', "x'; DROP TABLE items; --"],
    });
  });

  it("no filter: TRUE, the resource's default order and page", () => {
    expect(compile('', [])).toEqual({ where: 'TRUE', orderBy: 't.created_at DESC NULLS LAST, t.id ASC', limit: '$1::int', offset: '$2::int', group: null, params: [50, 0], filterParams: [] });
  });

  it('sorts on json keys through a bound path', () => {
    const c = compile('name_eq=a&_sort=attributes*x:-', []);
    expect(c.orderBy).toBe('(t.attributes #>> $2::text[]) DESC NULLS LAST, t.id ASC');
    // A count of the same filter takes the filter's parameters only.
    expect(c.filterParams).toEqual(['a']);
  });

  it("a field's own equality takes eq, eqi, in, ini and their negations; the other operators and the sort read its sql", () => {
    const equals = (values: readonly unknown[], ignoreCase: boolean, bind: (v: unknown, cast: string) => string) => `t.code = ANY(${bind(values.map((v) => `${v}${ignoreCase ? '/i' : ''}`), 'text[]')})`;
    const coded = { ...ITEMS, fields: { ...ITEMS.fields, name: { ...ITEMS.fields.name!, equals } } };
    const sql = (query: string) => {
      const c = compileListQuery(parseListQuery(query, coded), coded, []);
      return [c.where, c.filterParams, c.orderBy];
    };
    expect(sql('name_eq=a')).toEqual(['t.code = ANY($1::text[])', [['a']], 't.created_at DESC NULLS LAST, t.id ASC']);
    expect(sql('name_ini=a|b&_sort=name')).toEqual(['t.code = ANY($1::text[])', [['a/i', 'b/i']], 't.name ASC NULLS LAST, t.id ASC']);
    expect(sql('name_nin=a|b')).toEqual(['NOT coalesce(t.code = ANY($1::text[]), false)', [['a', 'b']], expect.any(String)]);
    expect(sql('name_nei=a')).toEqual(['NOT coalesce(t.code = ANY($1::text[]), false)', [['a/i']], expect.any(String)]);
    expect(sql('name_starts=a')).toEqual(['starts_with(t.name, $1::text)', ['a'], expect.any(String)]);
  });

  it('_group is a UTC date_trunc of the group field, its unit from a fixed table', () => {
    expect(compile('_group=monthly').group).toBe("date_trunc('month', t.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'");
    expect(compile('_group=hourly').group).toContain("date_trunc('hour'");
  });
});

import { literal, sql } from '@meld/clickhouse';
import { audienceCount, audienceSelect } from './compile';
import { AudienceFilterError } from './errors';
import { AUDIENCE_FILTER_LIMITS } from './limits';
import { parseAudienceFilter } from './parse';
import { TEST_CATALOGUE, withoutSlots } from '../../test/audience/test-catalogue';

const PROJECT = 'p-1';
const NOW = new Date('2026-06-15T12:00:00Z');
// The count's text ends with the compiled root (compileLast); compile adds a trailing condition (1), so
// that the root is delimited by AND on both sides.
const compileWith = (root: unknown, catalogue: typeof TEST_CATALOGUE, where?: ReturnType<typeof sql>) =>
  audienceCount({ projectId: PROJECT, root: root === undefined ? undefined : parseAudienceFilter(root, catalogue), counts: [['total']], where, now: NOW }).text;
const compile = (root?: unknown, catalogue = TEST_CATALOGUE) => compileWith(root, catalogue, sql`1`);
const compileLast = (root: unknown) => compileWith(root, TEST_CATALOGUE);
const viaArrays = (root: unknown) => compile(root, withoutSlots(TEST_CATALOGUE));
const attr = (key: string, operator: string, values: unknown[] = []) => ({ type: 'attribute_condition', key, operator, values });

describe('audienceSelect', () => {
  it('reads the current contacts of the project: the +1 rows whose state no −1 cancels, no FINAL', () => {
    expect(audienceSelect({ projectId: PROJECT, columns: sql`count() AS total` }).text).toBe(
      "SELECT count() AS total FROM (SELECT *, audience_hash FROM audience_snapshot WHERE project_id = 'p-1' AND deleted = 0 AND sign = 1) WHERE cityHash64(audience_id, version) NOT IN (SELECT arrayJoin((SELECT groupArray(cityHash64(audience_id, version)) FROM audience_snapshot WHERE project_id = 'p-1' AND sign = -1)))",
    );
  });

  it('adds the extra condition in parentheses', () => {
    const text = audienceSelect({ projectId: PROJECT, columns: sql`audience_id`, where: sql`has(channels, ${'sms'}) OR 1` }).text;
    expect(text).toMatch(/AND \(has\(channels, 'sms'\) OR 1\)\) WHERE cityHash64\(audience_id, version\) NOT IN/);
  });

  it('an empty group is no condition, negated it is none', () => {
    expect(compile({ type: 'group', operator: 'or', children: [] })).toMatch(/deleted = 0 AND 1 AND \(1\)$/);
    expect(compile({ type: 'group', negate: true, children: [] })).toMatch(/deleted = 0 AND \(NOT 1\) AND \(1\)$/);
  });

  it('enters every value through the escaper', () => {
    const evil = "x' OR 1 = 1 --\\";
    const text = compile({ type: 'group', operator: 'or', children: [attr('city', 'matches-string', [evil, 'É']), { type: 'event_condition', key: 'purchase.product-id', operator: 'contains-string', values: [evil] }] });
    expect(text).toContain(literal(evil.toLowerCase()));
    expect(text).toContain(`lowerUTF8(${literal('É')})`);
    expect(text).not.toContain("x' OR");
  });

  it('picks the typed arrays from the attribute type (attributes without a slot)', () => {
    expect(viaArrays(attr('city', 'is-set'))).toContain("has(str_keys, 'city')");
    expect(viaArrays(attr('score', 'is-not-set'))).toContain("(NOT has(num_keys, 'score'))");
    // has() only where the test holds for what an absent attribute reads as ('' or 0).
    expect(viaArrays(attr('vip', 'is-true'))).toContain("AND (num_values[indexOf(num_keys, 'vip')] = 1) AND");
    expect(viaArrays(attr('vip', 'is-false'))).toContain("AND (has(num_keys, 'vip') AND num_values[indexOf(num_keys, 'vip')] = 0) AND");
    expect(viaArrays(attr('city', 'not-matches-string', ['X']))).toContain("AND (NOT (lowerUTF8(str_values[indexOf(str_keys, 'city')]) = 'x')) AND");
    expect(viaArrays(attr('city', 'matches-string', ['X', '']))).toContain("AND (has(str_keys, 'city') AND has(['x', ''], lowerUTF8(str_values[indexOf(str_keys, 'city')]))) AND");
    expect(viaArrays(attr('score', 'less-than', [1]))).toContain("(has(num_keys, 'score') AND (num_values[indexOf(num_keys, 'score')] < 1))");
    expect(viaArrays(attr('score', 'greater-than', [0]))).toContain("AND ((num_values[indexOf(num_keys, 'score')] > 0)) AND");
    expect(compile(attr('tags', 'matches-string', ['A']))).toContain("arrayExists(x -> lowerUTF8(x) = 'a', arrayFilter((x, k) -> k = 'tags', str_values, str_keys))");
  });

  it('reads a slotted single-valued attribute from its column, its presence from the mask', () => {
    expect(compile(attr('city', 'is-set'))).toContain('AND bitAnd(str_slots, 1) != 0 AND');
    expect(compile(attr('score', 'is-not-set'))).toContain('(NOT bitAnd(num_slots, 1) != 0)');
    expect(compile(attr('vip', 'is-true'))).toContain('AND (n1 = 1) AND');
    expect(compile(attr('vip', 'is-false'))).toContain('AND (bitAnd(num_slots, 2) != 0 AND n1 = 0) AND');
    expect(compile(attr('city', 'matches-string', ['X', '']))).toContain("AND (bitAnd(str_slots, 1) != 0 AND has(['x', ''], lowerUTF8(s0))) AND");
    expect(compile(attr('_email', 'ends-with-string', ['@x.org']))).toContain("endsWith(lowerUTF8(s1), '@x.org')");
    // No slot: the arrays, whatever the kind.
    expect(compile(attr('_phone_mobile', 'starts-with-string', ['+33']))).toContain("str_values[indexOf(str_keys, '_phone_mobile')]");
    expect(compile(attr('last_login', 'is-set'))).toContain("has(num_keys, 'last_login')");
  });

  it('resolves in-last-days and lastDays against now', () => {
    const now = NOW.getTime() / 1000;
    expect(compile(attr('visits', 'in-last-days', [2]))).toContain(`(x >= ${now - 2 * 86400} AND x <= ${now})`);
    expect(compile({ type: 'group_event', eventType: 'login', timeframe: { lastDays: 1 } })).toContain(`event_date >= toDateTime(${now - 86400}) AND event_date <= toDateTime(${now})`);
  });

  it('a timeframe outside what DateTime holds matches no event instead of failing', () => {
    expect(compile({ type: 'group_event', eventType: 'login', timeframe: { to: '1960-01-01' } })).toContain("event_type = 'login' AND 0");
    expect(compile({ type: 'group_event', eventType: 'login', timeframe: { from: '1960-01-01', to: '2200-01-01' } })).not.toContain('event_date');
  });

  it('compiles counts: at-most and exactly 0 are complements', () => {
    const group = (operator: string, value: number) => compileLast({ type: 'group_event', eventType: 'login', count: { operator, value } });
    const exists = /audience_id IN \(SELECT aid FROM \(SELECT .* FROM audience_membership .* IN \(SELECT data_source_id, user_id FROM events PREWHERE .*\) GROUP BY data_source_id, user_id\) WHERE gone = 0\)/;
    expect(group('at-least', 1)).toMatch(new RegExp(`AND ${exists.source}$`));
    expect(group('at-least', 2)).toMatch(/AND audience_id IN \(.*groupArray\(cityHash64\(event_id\)\).*HAVING uniqExactArray\(ids\) >= 2\)$/);
    expect(group('at-most', 2)).toMatch(/AND \(NOT audience_id IN \(.*HAVING uniqExactArray\(ids\) > 2\)\)$/);
    expect(group('exactly', 0)).toMatch(new RegExp(`AND \\(NOT ${exists.source}\\)$`));
    expect(group('at-most', 0)).toMatch(new RegExp(`AND \\(NOT ${exists.source}\\)$`));
    expect(group('exactly', 3)).toMatch(/HAVING uniqExactArray\(ids\) = 3\)$/);
    expect(group('at-least', 0)).toMatch(/deleted = 0 AND 1$/);
  });

  it('refuses a filter whose query would be too large for ClickHouse, naming the root', () => {
    // Control characters are escaped as \\xHH: 4 bytes of query text per character.
    const text = attr('city', 'matches-string', ['\u0001'.repeat(2000)]);
    const date = { type: 'event_condition', key: 'purchase.paid-at', operator: 'in-last-days', values: [3] };
    const root = { type: 'group', children: [...Array(25).fill(text), ...Array(50).fill(date)] };
    expect(() => compile(root)).toThrow(AudienceFilterError);
    expect(() => compile(root)).toThrow(new RegExp(`^root: the filter is too large .*${AUDIENCE_FILTER_LIMITS.maxSqlBytes}`));
  });

  describe('audienceCount', () => {
    it('sums sign over the matching rows of one plain read, a count per condition', () => {
      const root = parseAudienceFilter(attr('city', 'is-set'), TEST_CATALOGUE);
      const text = audienceCount({ projectId: PROJECT, root, counts: [['matching'], ['sms', sql`has(channels, ${'sms'})`]], where: sql`1` }).text;
      expect(text).toMatch(/^SELECT sum\(sign\) AS matching, sumIf\(sign, has\(channels, 'sms'\)\) AS sms FROM audience_snapshot WHERE project_id = 'p-1' AND deleted = 0 AND bitAnd\(str_slots, 1\) != 0 AND \(1\)$/);
      expect(text).not.toContain('FINAL');
      expect(text.match(/audience_snapshot/g)).toHaveLength(1);
    });

    it('refuses a column name that is not an identifier', () => {
      expect(() => audienceCount({ projectId: PROJECT, counts: [['n) FROM x --']] })).toThrow(/bad column name/);
    });
  });
});

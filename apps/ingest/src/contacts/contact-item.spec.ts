import { RESERVED_ATTRIBUTES } from '@meld/contracts';
import { type AttributeRule, inferRule, scalarError, valueError } from './attribute-rules';
import { parseAttributes, userIdError } from './contact-item';

const catalogue = new Map<string, AttributeRule>([
  ...RESERVED_ATTRIBUTES.map((a): [string, AttributeRule] => [a.uid, { ...a, reserved: true }]),
  ['tier', { uid: 'tier', type: 'string', multivalue: false, enabled: true, internal: false, reserved: false }],
  ['tags', { uid: 'tags', type: 'string', multivalue: true, enabled: true, internal: false, reserved: false }],
  ['off', { uid: 'off', type: 'number', multivalue: false, enabled: false, internal: false, reserved: false }],
]);
const skip = new Set(['_user_id']);
const parse = (input: Record<string, unknown>) => parseAttributes(input, catalogue, new Map(), skip);

describe('contact attribute rules', () => {
  it('requires _user_id as a non-empty string of bounded length', () => {
    expect(userIdError(undefined)).toBe('is required');
    expect(userIdError(null)).toBe('is required');
    expect(userIdError('  ')).toBe('must be a non-empty string');
    expect(userIdError(12)).toBe('must be a non-empty string');
    expect(userIdError('x'.repeat(181))).toMatch(/at most/);
    expect(userIdError('u-1')).toBeNull();
  });

  it('checks scalar syntax per catalogue type', () => {
    expect(scalarError('email', 'a@b.co')).toBeNull();
    expect(scalarError('email', 'a@b')).not.toBeNull();
    expect(scalarError('phone', '+33 6 12 34 56 78')).toBeNull();
    expect(scalarError('phone', '0612345678')).toBeNull();
    expect(scalarError('phone', 'call me')).not.toBeNull();
    expect(scalarError('number', 1.5)).toBeNull();
    expect(scalarError('number', '1.5')).not.toBeNull();
    expect(scalarError('number', Number.NaN)).not.toBeNull();
    expect(scalarError('boolean', false)).toBeNull();
    expect(scalarError('boolean', 'true')).not.toBeNull();
    expect(scalarError('date', '2024-02-29')).toBeNull();
    expect(scalarError('date', '2023-02-29')).not.toBeNull();
    expect(scalarError('datetime', '2024-01-01T10:00:00Z')).toBeNull();
    expect(scalarError('datetime', '2024-01-01T10:00:00')).not.toBeNull();
    expect(scalarError('string', 'x'.repeat(5000))).not.toBeNull();
  });

  it('names the type a non-string value must be with its article', () => {
    expect(scalarError('email', 42)).toBe('must be an email string');
    expect(scalarError('phone', 42)).toBe('must be a phone string');
    expect(scalarError('date', true)).toBe('must be a date string');
    expect(scalarError('datetime', {})).toBe('must be a datetime string');
    expect(scalarError('string', 1)).toBe('must be a string');
  });

  it('multi-valued attributes take a list (or one value), single-valued refuse lists', () => {
    const tags = catalogue.get('tags')!;
    expect(valueError(tags, ['a', 'b'])).toBeNull();
    expect(valueError(tags, 'a')).toBeNull();
    expect(valueError(tags, ['a', 1])).not.toBeNull();
    expect(valueError(catalogue.get('tier')!, ['a'])).not.toBeNull();
  });

  it('names unknown reserved attributes, refuses internal and disabled ones, null clears', () => {
    const r = parse({ _user_id: 'u', _frist_name: 'x', _datasources: ['a'], off: 1, _first_name: null, tier: 'gold', tags: 'vip' });
    expect(r.errors).toEqual({
      _frist_name: ['unknown reserved attribute _frist_name'],
      _datasources: ['_datasources is maintained by Meld and cannot be written'],
      off: ['attribute off is disabled'],
    });
    expect(r.patch).toEqual({ _first_name: null, tier: 'gold', tags: ['vip'] });
  });

  it('types a new custom name from its first value; null on an unknown name creates nothing', () => {
    expect(parse({ score: 3, vip: true, colours: ['red'], gone: null }).created).toEqual([
      { uid: 'score', type: 'number', multivalue: false },
      { uid: 'vip', type: 'boolean', multivalue: false },
      { uid: 'colours', type: 'string', multivalue: true },
    ]);
    expect(inferRule('x', { a: 1 })).toEqual(expect.any(String));
    expect(inferRule('x', [])).toEqual(expect.any(String));
    expect(parse({ 'bad name': 1 }).errors['bad name']).toBeDefined();
  });

  it('a new name whose first value does not fit the type it would get is an error and creates nothing', () => {
    const refused = parse({ score: [1, 'a'], nul: 'a\u0000b', long: 'x'.repeat(3000), many: Array.from({ length: 101 }, (_, i) => i), ok: ['a', 'b'] });
    expect(refused.errors).toEqual({
      score: ['every value must be a number'],
      nul: ['must not contain the NUL character (U+0000)'],
      long: ['must be at most 2048 characters'],
      many: ['must have at most 100 values'],
    });
    expect(refused.created).toEqual([{ uid: 'ok', type: 'string', multivalue: true }]);
  });
});

import fc from 'fast-check';
import { jsonTooDeep } from './json-depth';

/** The nesting of a parsed value, the reference the one-pass scan must agree with. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('jsonTooDeep', () => {
  it('agrees with the depth of the parsed value, brackets inside strings and escapes included (property)', () => {
    const text = fc.string({ unit: fc.constantFrom('a', '[', ']', '{', '}', '"', '\\', ' ') });
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, text, fc.integer(), fc.array(tie('tree'), { maxLength: 3 }), fc.dictionary(text, tie('tree'), { maxKeys: 3 })),
    }));
    fc.assert(
      fc.property(tree, fc.integer({ min: 0, max: 8 }), (value, max) => {
        expect(jsonTooDeep(JSON.stringify(value), max)).toBe(depthOf(value) > max);
      }),
    );
  });

  it('finds a deep body without parsing it', () => {
    expect(jsonTooDeep('['.repeat(100_000))).toBe(true);
    expect(jsonTooDeep(`${'['.repeat(32)}${']'.repeat(32)}`)).toBe(false);
    expect(jsonTooDeep(`${'['.repeat(33)}${']'.repeat(33)}`)).toBe(true);
    expect(jsonTooDeep(JSON.stringify({ note: '['.repeat(1000) }))).toBe(false);
  });
});

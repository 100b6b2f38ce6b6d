import fc from 'fast-check';
import { groupByKey } from './key-groups';

describe('groupByKey', () => {
  it('puts messages of one key in one lane, in offset order, lanes by first appearance', () => {
    expect(groupByKey(['a', 'b', 'a', 'c', 'b', 'a'])).toEqual([[0, 2, 5], [1, 4], [3]]);
  });

  it('gives every keyless message a lane of its own', () => {
    expect(groupByKey([null, 'a', null, 'a'])).toEqual([[0], [1, 3], [2]]);
  });

  it('is a partition of the indices that keeps per-key order (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { nil: null }), { maxLength: 200 }), (keys) => {
        const lanes = groupByKey(keys);
        const all = lanes.flat().sort((x, y) => x - y);
        expect(all).toEqual(keys.map((_, i) => i));
        for (const lane of lanes) {
          for (let j = 1; j < lane.length; j++) expect(lane[j]).toBeGreaterThan(lane[j - 1]);
          const key = keys[lane[0]];
          for (const i of lane) expect(keys[i]).toBe(key);
          if (key === null) expect(lane).toHaveLength(1);
        }
        const nonNullKeys = new Set(keys.filter((k) => k !== null));
        expect(lanes.filter((l) => keys[l[0]] !== null)).toHaveLength(nonNullKeys.size);
      }),
    );
  });
});

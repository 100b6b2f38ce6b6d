import fc from 'fast-check';
import { OffsetTracker } from './offset-tracker';

describe('OffsetTracker', () => {
  it('only advances over a contiguous prefix of completed messages', () => {
    const t = new OffsetTracker(4);
    expect(t.committableIndex).toBe(-1);
    t.complete(2);
    expect(t.committableIndex).toBe(-1);
    t.complete(0);
    expect(t.committableIndex).toBe(0);
    t.complete(1);
    expect(t.committableIndex).toBe(2);
    expect(t.allDone).toBe(false);
    t.complete(3);
    expect(t.allDone).toBe(true);
    expect(t.contiguous).toBe(4);
  });

  it('never passes an unfinished message, whatever the completion order (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }).chain((n) => fc.tuple(fc.constant(n), fc.shuffledSubarray([...Array(n).keys()], { minLength: 0, maxLength: n }))),
        ([n, order]) => {
          const t = new OffsetTracker(n);
          const done = new Set<number>();
          for (const i of order) {
            t.complete(i);
            done.add(i);
            for (let j = 0; j <= t.committableIndex; j++) expect(done.has(j)).toBe(true);
            expect(done.has(t.committableIndex + 1)).toBe(false);
          }
          expect(t.allDone).toBe(done.size === n);
        },
      ),
    );
  });

  it('rejects an index outside the batch', () => {
    expect(() => new OffsetTracker(2).complete(2)).toThrow(RangeError);
  });
});

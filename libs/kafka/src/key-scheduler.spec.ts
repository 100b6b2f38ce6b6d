import fc from 'fast-check';
import { KeyScheduler } from './key-scheduler';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Submits items in order the way processBatch does, awaiting when the scheduler asks. */
async function runAll<I>(scheduler: KeyScheduler<I>, items: readonly I[]): Promise<void> {
  for (const item of items) {
    if (scheduler.failed) break;
    const wait = scheduler.submit(item);
    if (wait) await wait;
  }
  await scheduler.drain();
}

describe('KeyScheduler', () => {
  it('runs synchronous work inline, in submission order, without yielding', () => {
    const ran: number[] = [];
    const s = new KeyScheduler<number>(4, (i) => (ran.push(i), true), () => 'same');
    for (const i of [0, 1, 2]) expect(s.submit(i)).toBeUndefined();
    expect(ran).toEqual([0, 1, 2]);
    expect(s.inFlight).toBe(0);
  });

  it('does not ask for keys while nothing is in flight', () => {
    const keyOf = jest.fn(() => 'k');
    const s = new KeyScheduler<number>(4, () => true, keyOf);
    s.submit(1);
    s.submit(2);
    expect(keyOf).not.toHaveBeenCalled();
  });

  it('chains an item behind its key’s async work and lets other keys through', async () => {
    const events: string[] = [];
    const keys = ['a', 'a', 'b'];
    const s = new KeyScheduler<number>(
      4,
      (i) => {
        events.push(`start ${i}`);
        if (i === 0) return tick().then(() => (events.push('end 0'), true));
        return true;
      },
      (i) => keys[i],
    );
    await runAll(s, [0, 1, 2]);
    // b (2) ran while a's first item was in flight; a's second waited for it.
    expect(events).toEqual(['start 0', 'start 2', 'end 0', 'start 1']);
  });

  it('keeps per-key order and bounds the keys in flight, whatever the timing (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.option(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { nil: null, freq: 6 }), fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 80 }),
        fc.integer({ min: 1, max: 6 }),
        async (items, limit) => {
          const started: number[] = [];
          const active = new Set<string>();
          let inFlight = 0;
          let peak = 0;
          const s = new KeyScheduler<number>(
            limit,
            (i) => {
              const [key, delay] = items[i];
              if (key !== null) {
                expect(active.has(key)).toBe(false);
                // Every earlier item of this key has started already (and so finished).
                for (let j = 0; j < i; j++) if (items[j][0] === key) expect(started).toContain(j);
              }
              started.push(i);
              if (delay === 0) return true;
              if (key !== null) active.add(key);
              inFlight++;
              peak = Math.max(peak, inFlight);
              return (async () => {
                for (let t = 0; t < delay; t++) await tick();
                inFlight--;
                if (key !== null) active.delete(key);
                return true;
              })();
            },
            (i) => items[i][0],
          );
          await runAll(s, items.map((_, i) => i));
          expect(started.sort((x, y) => x - y)).toEqual(items.map((_, i) => i));
          expect(peak).toBeLessThanOrEqual(limit);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('runs nothing more of a key whose work stopped unfinished', async () => {
    const ran: number[] = [];
    const s = new KeyScheduler<number>(
      4,
      (i) => {
        ran.push(i);
        return i === 0 ? tick().then(() => false) : true;
      },
      (i) => (i === 2 ? 'other' : 'k'),
    );
    await runAll(s, [0, 1, 2, 3]);
    expect(ran).toEqual([0, 2]);
  });

  it('asks canContinue before a chained item runs', async () => {
    const ran: number[] = [];
    let go = true;
    const s = new KeyScheduler<number>(
      4,
      (i) => {
        ran.push(i);
        go = false;
        return tick().then(() => true);
      },
      () => 'k',
      () => go,
    );
    await runAll(s, [0, 1]);
    expect(ran).toEqual([0]);
  });

  it('rejects drain() with the first error once the work in flight settled', async () => {
    const finished: number[] = [];
    const s = new KeyScheduler<number>(
      4,
      (i) =>
        tick().then(() => {
          if (i === 0) throw new Error('boom');
          return tick().then(() => (finished.push(i), true));
        }),
      (i) => `k${i}`,
    );
    await expect(runAll(s, [0, 1])).rejects.toThrow('boom');
    expect(finished).toEqual([1]);
  });
});

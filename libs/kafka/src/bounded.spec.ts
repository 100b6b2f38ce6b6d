import { runBounded } from './bounded';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('runBounded', () => {
  it('never runs more than the limit at once and runs every item once', async () => {
    let running = 0;
    let peak = 0;
    const seen: number[] = [];
    await runBounded([...Array(50).keys()], 4, async (i) => {
      running++;
      peak = Math.max(peak, running);
      for (let k = 0; k < (i % 3) + 1; k++) await tick();
      seen.push(i);
      running--;
    });
    expect(peak).toBe(4);
    expect(seen.sort((a, b) => a - b)).toEqual([...Array(50).keys()]);
  });

  it('stops taking new items when told to, and lets started ones finish', async () => {
    const started: number[] = [];
    let go = true;
    await runBounded(
      [...Array(20).keys()],
      2,
      async (i) => {
        started.push(i);
        if (i === 3) go = false;
        await tick();
      },
      () => go,
    );
    expect(started.length).toBeLessThanOrEqual(5);
    expect(started).toContain(3);
  });

  it('rejects with the first error after the started items settle', async () => {
    const finished: number[] = [];
    await expect(
      runBounded([0, 1, 2, 3], 2, async (i) => {
        await tick();
        if (i === 0) throw new Error('boom');
        await tick();
        finished.push(i);
      }),
    ).rejects.toThrow('boom');
    expect(finished).toEqual([1]);
  });
});

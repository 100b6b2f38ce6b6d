import { MicroBatcher, failed, ok } from './micro-batcher';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('MicroBatcher (group commit)', () => {
  it('runs a lone item at once, then coalesces what arrives while a batch runs', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new MicroBatcher<number, number>({
      maxBatch: 10,
      maxInFlight: 1,
      run: async (items) => {
        batches.push([...items]);
        if (batches.length === 1) await gate;
        return items.map((i) => ok(i * 2));
      },
    });
    const first = batcher.submit(1);
    await tick();
    const rest = [2, 3, 4].map((i) => batcher.submit(i));
    await tick();
    expect(batches).toEqual([[1]]);
    release();
    expect(await Promise.all([first, ...rest])).toEqual([2, 4, 6, 8]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('caps a batch at maxBatch items', async () => {
    const sizes: number[] = [];
    const batcher = new MicroBatcher<number, number>({ maxBatch: 2, maxInFlight: 1, run: async (items) => (sizes.push(items.length), items.map((i) => ok(i))) });
    await Promise.all([1, 2, 3, 4, 5].map((i) => batcher.submit(i)));
    expect(sizes).toEqual([1, 2, 2]);
  });

  it('answers each item its own outcome', async () => {
    const batcher = new MicroBatcher<number, number>({ maxBatch: 10, maxInFlight: 1, run: async (items) => items.map((i) => (i % 2 ? ok(i) : failed(new Error(`even ${i}`)))) });
    const results = await Promise.allSettled([1, 2, 3].map((i) => batcher.submit(i)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('runs a batch that threw again item by item, so one bad item fails alone', async () => {
    const batcher = new MicroBatcher<number, number>({
      maxBatch: 10,
      maxInFlight: 1,
      run: async (items) => {
        if (items.includes(13)) {
          if (items.length > 1) throw new Error('deadlock detected');
          throw new Error('thirteen');
        }
        return items.map((i) => ok(i));
      },
    });
    const blocker = batcher.submit(0);
    const results = await Promise.allSettled([12, 13, 14].map((i) => batcher.submit(i)));
    await blocker;
    expect(results).toEqual([
      { status: 'fulfilled', value: 12 },
      { status: 'rejected', reason: new Error('thirteen') },
      { status: 'fulfilled', value: 14 },
    ]);
  });
});

import { StepBatcher, type BatchedContact } from './step-batcher';

const c = (userId: string): BatchedContact => ({ dataSourceId: 'ds', userId });

describe('StepBatcher', () => {
  it('merges what is submitted together in one step per project, and later arrivals in the next', async () => {
    const steps: Array<[string, string[]]> = [];
    let release: () => void = () => undefined;
    const batcher = new StepBatcher<number>(
      {
        step: async (projectId, contacts) => {
          steps.push([projectId, contacts.map((x) => x.userId)]);
          if (contacts[0].userId === 'a') await new Promise<void>((r) => (release = r));
          return contacts.length;
        },
      },
      3,
    );
    const first = [batcher.submit('p', c('a')), batcher.submit('p', c('b')), batcher.submit('q', c('x'))];
    await new Promise((r) => setImmediate(r));
    // p's step runs; these wait for it, and the cap splits them.
    const later = ['c', 'd', 'e', 'f'].map((u) => batcher.submit('p', c(u)));
    release();
    await expect(Promise.all([...first, ...later])).resolves.toEqual([2, 2, 1, 3, 3, 3, 1]);
    expect(steps).toEqual([
      ['p', ['a', 'b']],
      ['q', ['x']],
      ['p', ['c', 'd', 'e']],
      ['p', ['f']],
    ]);
    expect(batcher.pending).toBe(0);
  });

  it('when a step of several fails, merges each alone and rejects only those that fail alone', async () => {
    const steps: string[][] = [];
    const batcher = new StepBatcher<string>(
      {
        step: async (_p, contacts) => {
          steps.push(contacts.map((x) => x.userId));
          if (contacts.some((x) => x.userId === 'poison')) throw new Error('bad contact');
          return 'ok';
        },
      },
      10,
    );
    const results = await Promise.allSettled(['a', 'poison', 'b'].map((u) => batcher.submit('p', c(u))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(new Error('bad contact'));
    expect(steps).toEqual([['a', 'poison', 'b'], ['a'], ['poison'], ['b']]);
  });
});

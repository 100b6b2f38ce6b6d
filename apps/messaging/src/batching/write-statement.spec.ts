import { WriteStatement } from './write-statement';

/** A client that records the statements it is given. */
function recorder() {
  const calls: Array<{ name: string; text: string; values: unknown[] }> = [];
  const em = { query: async (config: { name: string; text: string; values: unknown[] }) => void calls.push(config) };
  return { em, calls };
}

describe('WriteStatement (ADR 0254)', () => {
  it('numbers the parameters across parts and sends every part as one statement', async () => {
    const { em, calls } = recorder();
    const write = new WriteStatement();
    write.add(`UPDATE a SET x = ${write.param(1)} WHERE id = ${write.param('k')}`);
    write.add(`INSERT INTO b (v) SELECT * FROM unnest(${write.param([2, 3])}::int[])`);
    await write.run(em);
    expect(calls).toEqual([
      {
        name: expect.stringMatching(/^meld-messaging-write-[\w-]{16}$/),
        text: 'WITH w0 AS (UPDATE a SET x = $1 WHERE id = $2),\nw1 AS (INSERT INTO b (v) SELECT * FROM unnest($3::int[]))\nSELECT 1',
        values: [1, 'k', [2, 3]],
      },
    ]);
  });

  it('names the statement by its text: the same parts the same name, other parts another (ADR 0322)', async () => {
    const { em, calls } = recorder();
    for (const table of ['a', 'a', 'b']) {
      const write = new WriteStatement();
      write.add(`DELETE FROM ${table} WHERE id = ${write.param(table)}`);
      await write.run(em);
    }
    expect(calls[0]!.name).toBe(calls[1]!.name);
    expect(calls[2]!.name).not.toBe(calls[0]!.name);
  });

  it('sends nothing without parts', async () => {
    const { em, calls } = recorder();
    await new WriteStatement().run(em);
    expect(calls).toEqual([]);
  });
});

import type { EntityManager } from 'typeorm';
import { WriteStatement } from './write-statement';

/** An EntityManager that records the statements it is given. */
function recorder() {
  const calls: Array<{ sql: string; params: unknown[] }> = [];
  const em = { query: async (sql: string, params: unknown[]) => void calls.push({ sql, params }) } as unknown as EntityManager;
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
      { sql: 'WITH w0 AS (UPDATE a SET x = $1 WHERE id = $2),\nw1 AS (INSERT INTO b (v) SELECT * FROM unnest($3::int[]))\nSELECT 1', params: [1, 'k', [2, 3]] },
    ]);
  });

  it('sends nothing without parts', async () => {
    const { em, calls } = recorder();
    await new WriteStatement().run(em);
    expect(calls).toEqual([]);
  });
});

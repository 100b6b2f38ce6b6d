import { randomBytes } from 'node:crypto';
import { testEnv } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { escapeLiteral } from 'pg';
import { beginWith, createDataSource, inRawTransaction, rawPool } from '../src';

// rawPool reaches into TypeORM (driver.master): a TypeORM upgrade that moves it fails here.
describe('rawPool / inRawTransaction / beginWith', () => {
  const table = `raw_pool_${randomBytes(4).toString('hex')}`;
  let ds: DataSource;
  beforeAll(async () => {
    ds = await createDataSource({ url: testEnv().postgresUrl, applicationName: 'raw-pool-spec' }).initialize();
    await ds.query(`CREATE TABLE ${table} (n int PRIMARY KEY)`);
  });
  afterAll(async () => {
    await ds?.query(`DROP TABLE IF EXISTS ${table}`);
    await ds?.destroy();
  });
  const rows = async () => (await rawPool(ds).query<{ n: number }>(`SELECT n FROM ${table} ORDER BY n`)).rows.map((r) => r.n);

  it('is the pool TypeORM opened, and commits what the work did', async () => {
    await inRawTransaction(ds, (c) => c.query(`INSERT INTO ${table} VALUES (1), (2)`));
    expect(await rows()).toEqual([1, 2]);
  });

  it('rolls the work back when it throws, and the connection goes back usable', async () => {
    await expect(
      inRawTransaction(ds, async (c) => {
        await c.query(`INSERT INTO ${table} VALUES (3)`);
        await c.query(`INSERT INTO ${table} VALUES (1)`); // duplicate key
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await rows()).toEqual([1, 2]);
    for (let i = 0; i < 12; i++) await inRawTransaction(ds, (c) => c.query('SELECT 1'));
  });

  it("keeps idle connections for minutes (pg-pool's default closes them after 10 s, and each reopening forks a backend)", () => {
    const pool = rawPool(ds) as unknown as { options: { idleTimeoutMillis: number } };
    expect(pool.options.idleTimeoutMillis).toBeGreaterThanOrEqual(60_000);
  });

  it('beginWith: BEGIN and the first statement in one round trip, inside the transaction until COMMIT', async () => {
    const tx = await beginWith<{ n: number }>(ds, `SELECT 10 AS n`);
    expect(tx.rows).toEqual([{ n: 10 }]);
    await tx.client.query(`INSERT INTO ${table} VALUES (10)`);
    expect(await rows()).toEqual([1, 2]); // not visible to others before COMMIT
    await tx.commit();
    await tx.release(); // after commit: nothing to do
    expect(await rows()).toEqual([1, 2, 10]);
  });

  it('beginWith asyncCommit: synchronous_commit is off in that transaction only', async () => {
    const tx = await beginWith<{ sc: string }>(ds, `SELECT current_setting('synchronous_commit') AS sc`, { asyncCommit: true });
    expect(tx.rows).toEqual([{ sc: 'off' }]);
    await tx.client.query(`INSERT INTO ${table} VALUES (12)`);
    await tx.commit();
    expect(await rows()).toContain(12);
    const after = await beginWith<{ sc: string }>(ds, `SELECT current_setting('synchronous_commit') AS sc`);
    expect(after.rows).toEqual([{ sc: 'on' }]);
    await after.release();
    await rawPool(ds).query(`DELETE FROM ${table} WHERE n = 12`);
  });

  it('beginWith settings: in force for that transaction only, with asyncCommit too', async () => {
    const read = `SELECT current_setting('enable_seqscan') AS seq, current_setting('enable_hashjoin') AS hash, current_setting('synchronous_commit') AS sc`;
    const tx = await beginWith<{ seq: string; hash: string; sc: string }>(ds, read, { settings: { enable_seqscan: 'off', enable_hashjoin: 'off' }, asyncCommit: true });
    expect(tx.rows).toEqual([{ seq: 'off', hash: 'off', sc: 'off' }]);
    await tx.commit();
    const after = await beginWith<{ seq: string; hash: string; sc: string }>(ds, read);
    expect(after.rows).toEqual([{ seq: 'on', hash: 'on', sc: 'on' }]);
    await after.release();
  });

  it('beginWith: release rolls back, and values travel as escaped literals', async () => {
    const quote = "o'brien\\ \"x\" $1 ; DROP TABLE x --";
    const tx = await beginWith<{ s: string }>(ds, `SELECT ${escapeLiteral(quote)}::text AS s`);
    expect(tx.rows[0].s).toBe(quote);
    await tx.client.query(`INSERT INTO ${table} VALUES (11)`);
    await tx.release();
    expect(await rows()).toEqual([1, 2, 10]);
    await expect(tx.commit()).rejects.toThrow('no longer open');
  });

  it('beginWith: a failing first statement rejects and leaves no connection behind', async () => {
    const before = rawPool(ds).totalCount - rawPool(ds).idleCount;
    await expect(beginWith(ds, 'SELECT 1/0')).rejects.toMatchObject({ code: '22012' });
    expect(rawPool(ds).totalCount - rawPool(ds).idleCount).toBe(before);
    const tx = await beginWith<{ one: number }>(ds, 'SELECT 1 AS one');
    expect(tx.rows).toEqual([{ one: 1 }]);
    await tx.commit();
  });
});

import { randomBytes } from 'node:crypto';
import { testEnv } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { createDataSource, inRawTransaction, rawPool } from '../src';

// rawPool reaches into TypeORM (driver.master): a TypeORM upgrade that moves it fails here.
describe('rawPool / inRawTransaction', () => {
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
});

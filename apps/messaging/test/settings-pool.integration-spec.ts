import { createDataSource, rawPool } from '@meld/db';
import { testEnv } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { settingsPool } from '../src/db/settings-pool';

// ADR 0315: the webhook claim's planner setting is its connection's, so the claim is one round trip.
describe('settingsPool (real Postgres)', () => {
  let ds: DataSource;

  beforeAll(async () => {
    ds = await createDataSource({ url: testEnv().postgresUrl, applicationName: 'settings-pool-spec' }).initialize();
  });
  afterAll(async () => {
    await ds?.destroy();
  });

  it('opens connections with its settings, leaving the main pool as it was', async () => {
    const pool = settingsPool(ds, { enable_sort: 'off', work_mem: '8MB' });
    try {
      const { rows } = await pool.query(`SELECT current_setting('enable_sort') AS sort, current_setting('work_mem') AS mem, current_setting('application_name') AS app`);
      expect(rows).toEqual([{ sort: 'off', mem: '8MB', app: 'settings-pool-spec' }]);
      const { rows: main } = await rawPool(ds).query(`SELECT current_setting('enable_sort') AS sort`);
      expect(main).toEqual([{ sort: 'on' }]);
    } finally {
      await pool.end();
    }
  });

  it('opens another connection after its connection was terminated', async () => {
    const pool = settingsPool(ds, { enable_sort: 'off' });
    try {
      const { rows: [{ pid }] } = await pool.query<{ pid: number }>(`SELECT pg_backend_pid() AS pid`);
      await rawPool(ds).query(`SELECT pg_terminate_backend($1)`, [pid]);
      // The idle connection's error is heard (not thrown out of the process); the next query gets a new one.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { rows } = await pool.query(`SELECT pg_backend_pid() AS pid, current_setting('enable_sort') AS sort`);
      expect(rows[0].pid).not.toBe(pid);
      expect(rows[0].sort).toBe('off');
    } finally {
      await pool.end();
    }
  });
});

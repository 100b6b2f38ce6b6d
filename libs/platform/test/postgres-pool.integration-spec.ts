import type { INestApplication } from '@nestjs/common';
import { DATA_SOURCE, PostgresConnection } from '@meld/db';
import { testEnv } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { bootstrapApp, meldAppModule } from '../src';

/**
 * MELD_POSTGRES_POOL_SIZE bounds the connections an app opens to Postgres: each pod's share of
 * max_connections, which the production overlay's HPA maxima multiply (docs/deploy.md).
 */
describe('the Postgres pool size', () => {
  const env = testEnv();
  const apps: INestApplication[] = [];

  async function start(name: string, extra: NodeJS.ProcessEnv): Promise<DataSource> {
    const appEnv = { LOG_LEVEL: 'silent', MELD_ALLOW_DEV_SECRETS: '1', MELD_POSTGRES_URL: env.postgresUrl, ...extra };
    const app = await bootstrapApp({ app: name, module: meldAppModule({ name, port: 0, stores: ['postgres'] }, appEnv), host: '127.0.0.1', port: 0 });
    apps.push(app);
    await app.get(PostgresConnection).connected;
    return app.get<DataSource>(DATA_SOURCE);
  }

  /** Backends serving `n` queries run at once, and the app's connections Postgres counts meanwhile. */
  async function burst(ds: DataSource, name: string, n: number) {
    const rows = await Promise.all(Array.from({ length: n }, () => ds.query('SELECT pg_backend_pid() AS pid, pg_sleep(0.2)')));
    const [{ open }] = await ds.query('SELECT count(*)::int AS open FROM pg_stat_activity WHERE application_name = $1', [`meld-${name}`]);
    return { backends: new Set(rows.map((r: Array<{ pid: number }>) => r[0].pid)).size, open: open as number };
  }

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
  });

  it('opens at most MELD_POSTGRES_POOL_SIZE connections, however many queries wait', async () => {
    const name = `pool-spec-small-${process.pid}`;
    const ds = await start(name, { MELD_POSTGRES_POOL_SIZE: '2' });
    expect(await burst(ds, name, 8)).toEqual({ backends: 2, open: 2 });
  });

  it('keeps 10 by default', async () => {
    const name = `pool-spec-default-${process.pid}`;
    const ds = await start(name, {});
    const { backends } = await burst(ds, name, 14);
    expect(backends).toBe(10);
  });

  it.each(['0', '101', 'ten', '2.5'])('refuses MELD_POSTGRES_POOL_SIZE=%s at start, naming it', async (value) => {
    await expect(start(`pool-spec-bad-${process.pid}`, { MELD_POSTGRES_POOL_SIZE: value })).rejects.toThrow(/MELD_POSTGRES_POOL_SIZE/);
  });
});

import { randomBytes } from 'node:crypto';
import { testEnv } from '@meld/testing';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { createDataSource, OutboxPump, type OutboxMessage } from '../src';

// The pump on an `outbox` table of a schema of its own (search_path), so the apps' pumps of
// other tests never see these rows.
describe('OutboxPump', () => {
  const schema = `pump_${randomBytes(4).toString('hex')}`;
  let ds: DataSource;

  beforeAll(async () => {
    const url = new URL(testEnv().postgresUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    ds = await createDataSource({ url: url.toString(), applicationName: 'outbox-pump-spec' }).initialize();
    await ds.query(`CREATE SCHEMA ${schema}`);
    await ds.query(`CREATE TABLE ${schema}.outbox (id bigserial PRIMARY KEY, topic text NOT NULL, key text NOT NULL, value jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
  });
  afterAll(async () => {
    await ds?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await ds?.destroy();
  });

  const write = (n: number) => ds.query(`INSERT INTO outbox (topic, key, value) VALUES ('t', $1, $2)`, [`k${n}`, JSON.stringify({ n })]);

  it('gathers the rows of writes nudging it within its linger into one send, in order', async () => {
    const sends: OutboxMessage[][] = [];
    const pump = new OutboxPump(ds, { table: 'outbox', publish: async (_t, messages) => void sends.push(messages), metrics: new Registry(), idleMs: 100, lingerMs: 400 });
    pump.start();
    await new Promise((r) => setTimeout(r, 100)); // the first (empty) pass, then idle and linger
    for (let n = 1; n <= 3; n++) {
      await write(n);
      pump.nudge();
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 800));
    await pump.stop();
    expect(sends.map((s) => s.map((m) => m.key))).toEqual([['k1', 'k2', 'k3']]);
    expect(Number((await ds.query(`SELECT count(*) AS n FROM outbox`))[0].n)).toBe(0);
  });

  it('without a linger publishes each nudged write at once', async () => {
    const sends: OutboxMessage[][] = [];
    const pump = new OutboxPump(ds, { table: 'outbox', publish: async (_t, messages) => void sends.push(messages), metrics: new Registry(), idleMs: 100 });
    pump.start();
    await new Promise((r) => setTimeout(r, 100));
    for (let n = 4; n <= 5; n++) {
      await write(n);
      pump.nudge();
      await new Promise((r) => setTimeout(r, 200));
    }
    await pump.stop();
    expect(sends.map((s) => s.map((m) => m.key))).toEqual([['k4'], ['k5']]);
  });
});

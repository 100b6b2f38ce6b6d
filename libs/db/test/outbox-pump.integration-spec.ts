import { randomBytes } from 'node:crypto';
import { testEnv } from '@meld/testing';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { createDataSource, OutboxPump, type OutboxMessage } from '../src';

// The pump on an outbox table of a schema of its own (search_path), so the apps' pumps of
// other tests never see these rows; its name is this run's own too, as a pump's advisory lock is
// keyed by the table's name and one named `outbox` was also taken by ingest's pumps in other specs.
describe('OutboxPump', () => {
  const schema = `pump_${randomBytes(4).toString('hex')}`;
  const table = `outbox_${randomBytes(4).toString('hex')}`;
  let ds: DataSource;

  beforeAll(async () => {
    const url = new URL(testEnv().postgresUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    ds = await createDataSource({ url: url.toString(), applicationName: 'outbox-pump-spec' }).initialize();
    await ds.query(`CREATE SCHEMA ${schema}`);
    await ds.query(`CREATE TABLE ${schema}.${table} (id bigserial PRIMARY KEY, topic text NOT NULL, key text NOT NULL, value jsonb NOT NULL, trace jsonb, created_at timestamptz NOT NULL DEFAULT now())`);
  });
  afterAll(async () => {
    await ds?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await ds?.destroy();
  });

  const write = (n: number) => ds.query(`INSERT INTO ${table} (topic, key, value) VALUES ('t', $1, $2)`, [`k${n}`, JSON.stringify({ n })]);
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('gathers the rows of writes arriving within its linger after a send into one send, in order', async () => {
    const sends: OutboxMessage[][] = [];
    const pump = new OutboxPump(ds, { table, publish: async (_t, messages) => void sends.push(messages), metrics: new Registry(), lingerMs: 400 });
    pump.start();
    await pause(100); // the first (empty) pass, then asleep
    for (let n = 1; n <= 4; n++) {
      await write(n);
      pump.nudge();
      await pause(50);
    }
    await pause(800);
    await pump.stop();
    // The first write after idle goes at once (ADR 0212); the next ones wait out the linger together.
    // On a loaded machine k2 can be committed before that first pass reads, so k1's send may carry
    // it too: what must hold is order, k1 not held back, and the rest gathered into one send.
    const keys = sends.map((s) => s.map((m) => m.key));
    expect(keys.flat()).toEqual(['k1', 'k2', 'k3', 'k4']);
    expect(keys[0][0]).toBe('k1');
    expect(keys).toHaveLength(2);
    expect(Number((await ds.query(`SELECT count(*) AS n FROM ${table}`))[0].n)).toBe(0);
  });

  it('without a linger publishes each nudged write at once', async () => {
    const sends: OutboxMessage[][] = [];
    const pump = new OutboxPump(ds, { table, publish: async (_t, messages) => void sends.push(messages), metrics: new Registry() });
    pump.start();
    await pause(100);
    for (let n = 5; n <= 6; n++) {
      await write(n);
      pump.nudge();
      await pause(200);
    }
    await pump.stop();
    expect(sends.map((s) => s.map((m) => m.key))).toEqual([['k5'], ['k6']]);
  });

  it('at rest runs no pass until its safety poll, and then one (ADR 0212)', async () => {
    const pump = new OutboxPump(ds, { table, publish: async () => undefined, metrics: new Registry(), safetyPollMs: 1500 });
    const passes = jest.spyOn(pump, 'drainOnce');
    pump.start();
    await pause(1200);
    expect(passes).toHaveBeenCalledTimes(1); // the first pass at start
    await pause(700);
    expect(passes).toHaveBeenCalledTimes(2);
    await pump.stop();
  });

  it('at rest by default stays asleep for seconds (the old 250 ms poll cost a core-percent per pump)', async () => {
    const pump = new OutboxPump(ds, { table, publish: async () => undefined, metrics: new Registry() });
    const passes = jest.spyOn(pump, 'drainOnce');
    pump.start();
    await pause(2000);
    await pump.stop();
    expect(passes).toHaveBeenCalledTimes(1);
  });

  it('sends the trace a row was written with as its headers', async () => {
    const sends: OutboxMessage[][] = [];
    const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'x-request-id': 'req-outbox-1' };
    await ds.query(`INSERT INTO ${table} (topic, key, value, trace) VALUES ('t', 'k7', '{}', $1), ('t', 'k8', '{}', NULL)`, [JSON.stringify(trace)]);
    const pump = new OutboxPump(ds, { table, publish: async (_t, messages) => void sends.push(messages), metrics: new Registry() });
    expect(await pump.drainOnce()).toBe(2);
    expect(sends).toEqual([[{ key: 'k7', value: {}, headers: trace }, { key: 'k8', value: {} }]]);
  });

  it('publishes the rows of interleaved topics in one send per topic, all made at once, in id order per topic (ADR 0278)', async () => {
    await ds.query(`INSERT INTO ${table} (topic, key, value) VALUES ('s', 'a1', '{}'), ('e', 'a1', '{}'), ('s', 'b1', '{}'), ('e', 'b1', '{}'), ('s', 'a2', '{}')`);
    const sends: Array<{ topic: string; keys: string[] }> = [];
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    // Each send stays in flight until released: a pump sending one topic after the other never
    // makes the second while the first is pending.
    const publish = (topic: string, messages: OutboxMessage[]) => {
      sends.push({ topic, keys: messages.map((m) => m.key) });
      return released;
    };
    const pump = new OutboxPump(ds, { table, publish, metrics: new Registry() });
    const pass = pump.drainOnce();
    for (let i = 0; i < 50 && sends.length < 2; i++) await pause(10);
    const madeAtOnce = [...sends];
    release();
    expect(await pass).toBe(5);
    expect(madeAtOnce).toEqual([
      { topic: 's', keys: ['a1', 'b1', 'a2'] },
      { topic: 'e', keys: ['a1', 'b1'] },
    ]);
  });

  it('keeps every row of a pass when one of its topics fails, and publishes them all again', async () => {
    await ds.query(`INSERT INTO ${table} (topic, key, value) VALUES ('s', 'c1', '{}'), ('bad', 'c1', '{}')`);
    const fail = new OutboxPump(ds, { table, publish: async (topic) => (topic === 'bad' ? Promise.reject(new Error('unknown topic')) : undefined), metrics: new Registry() });
    await expect(fail.drainOnce()).rejects.toThrow('unknown topic');
    const sends: string[] = [];
    const ok = new OutboxPump(ds, { table, publish: async (topic, messages) => void sends.push(...messages.map((m) => `${topic}/${m.key}`)), metrics: new Registry() });
    expect(await ok.drainOnce()).toBe(2);
    expect(sends.sort()).toEqual(['bad/c1', 's/c1']);
  });

  it('waits its error backoff even when writes keep nudging it (a broker outage must not become a busy loop)', async () => {
    await write(9);
    let attempts = 0;
    const publish = async () => {
      attempts++;
      throw new Error('broker down');
    };
    const pump = new OutboxPump(ds, { table, publish, metrics: new Registry(), errorBackoffMs: 1000 });
    pump.start();
    for (let i = 0; i < 60; i++) {
      pump.nudge();
      await pause(20);
    }
    await pump.stop();
    await ds.query(`DELETE FROM ${table}`);
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(attempts).toBeLessThanOrEqual(2);
  });

  it('refuses a table name that is not a plain identifier', () => {
    for (const table of ['outbox"; DROP TABLE outbox; --', 'Outbox', 'public.outbox', '']) {
      expect(() => new OutboxPump(ds, { table, publish: async () => undefined, metrics: new Registry() })).toThrow(/not a plain identifier/);
    }
  });
});


import { randomBytes } from 'node:crypto';
import { testEnv } from '@meld/testing';
import { Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { UnpublishableMessageError } from '@meld/kafka';
import { KafkaJSNonRetriableError, KafkaJSProtocolError } from 'kafkajs';
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
    // The migrated table's shape (ADR 0346), in this schema: the pump names it unqualified.
    await ds.query(`CREATE TABLE ${schema}.outbox_dead_letters (LIKE public.outbox_dead_letters INCLUDING ALL)`);
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

  describe('a row Kafka can never take (ADR 0346)', () => {
    /** What kafkajs throws for a batch the broker refused as too large: a protocol error, wrapped by its retrier. */
    const tooLarge = () => {
      const refused = new KafkaJSProtocolError({ type: 'MESSAGE_TOO_LARGE', code: 10, retriable: false, message: 'too large' } as never);
      return Object.assign(new KafkaJSNonRetriableError(refused), { cause: refused });
    };
    /** A broker that refuses any send holding a message whose value has `big`, and records what it took. */
    const broker = () => {
      const taken: string[] = [];
      let sends = 0;
      const publish = async (topic: string, messages: OutboxMessage[]) => {
        sends++;
        if (big(messages)) throw tooLarge();
        taken.push(...messages.map((m) => `${topic}/${m.key}`));
      };
      return { taken, publish, sends: () => sends };
    };
    const counter = async (metrics: Registry) => (await metrics.getSingleMetric('meld_outbox_dead_lettered_total')!.get()).values;
    const dead = () => ds.query(`SELECT outbox, outbox_id::text AS id, topic, key, value, trace, error FROM outbox_dead_letters ORDER BY id`);
    /** A pass publishing with `publish` fails with `message`, keeps its `rows` rows and sets nothing aside. */
    const failsKeepingAll = async (publish: (topic: string, messages: OutboxMessage[]) => Promise<void>, message: string, rows: number) => {
      const pump = new OutboxPump(ds, { table, publish, metrics: new Registry() });
      await expect(pump.drainOnce()).rejects.toThrow(message);
      expect(Number((await ds.query(`SELECT count(*) AS n FROM ${table}`))[0].n)).toBe(rows);
      expect(await dead()).toEqual([]);
    };
    const big = (messages: OutboxMessage[]) => messages.some((m) => (m.value as { big?: boolean }).big);
    afterEach(async () => {
      await ds.query(`DELETE FROM ${table}`);
      await ds.query(`DELETE FROM outbox_dead_letters`);
    });

    it('sets it aside with its reason, publishes every other row of the pass in order, and counts it', async () => {
      const values = Array.from({ length: 40 }, (_, i) => ({ key: `r${i}`, value: i === 23 ? { big: true } : { n: i } }));
      await ds.query(`INSERT INTO ${table} (topic, key, value, trace) SELECT 't', v->>'key', v->'value', $2::jsonb FROM jsonb_array_elements($1::jsonb) v`, [
        JSON.stringify(values),
        JSON.stringify({ 'x-request-id': 'req-big' }),
      ]);
      const [{ id: bigId }] = await ds.query(`SELECT id::text AS id FROM ${table} WHERE key = 'r23'`);
      const { taken, publish, sends } = broker();
      const metrics = new Registry();
      const pump = new OutboxPump(ds, { table, publish, metrics });
      expect(await pump.drainOnce()).toBe(40);
      expect(taken).toEqual(values.filter((_, i) => i !== 23).map((v) => `t/${v.key}`));
      expect(sends()).toBeLessThanOrEqual(1 + 2 * Math.ceil(Math.log2(40)));
      expect(await dead()).toEqual([
        { outbox: table, id: bigId, topic: 't', key: 'r23', value: { big: true }, trace: { 'x-request-id': 'req-big' }, error: expect.stringMatching(/^message_too_large \(MESSAGE_TOO_LARGE\): /) },
      ]);
      expect(await counter(metrics)).toEqual([{ labels: { outbox: table, reason: 'message_too_large' }, value: 1 }]);
      expect(Number((await ds.query(`SELECT count(*) AS n FROM ${table}`))[0].n)).toBe(0);
    });

    it('sets aside a row failing its topic schema, and only on that topic', async () => {
      await ds.query(`INSERT INTO ${table} (topic, key, value) VALUES ('s', 'a', '{"ok":1}'), ('e', 'a', '{"ok":1}'), ('s', 'b', '{"ok":false}'), ('s', 'c', '{"ok":1}')`);
      const taken: string[] = [];
      const publish = async (topic: string, messages: OutboxMessage[]) => {
        const bad = messages.findIndex((m) => (m.value as { ok: unknown }).ok !== 1);
        if (bad >= 0) throw new UnpublishableMessageError('schema', `message ${bad} for ${topic} does not match its schema`);
        taken.push(...messages.map((m) => `${topic}/${m.key}`));
      };
      const pump = new OutboxPump(ds, { table, publish, metrics: new Registry() });
      expect(await pump.drainOnce()).toBe(4);
      expect(taken.sort()).toEqual(['e/a', 's/a', 's/c']);
      expect((await dead()).map((d: { key: string; error: string }) => [d.key, d.error.split(':')[0]])).toEqual([['b', 'schema']]);
    });

    it('keeps every row when a send fails for a reason that may pass, even beside a refusal: nothing is set aside', async () => {
      await ds.query(`INSERT INTO ${table} (topic, key, value) VALUES ('s', 'a', '{"big":true}'), ('down', 'b', '{}')`);
      const publish = async (topic: string, messages: OutboxMessage[]) => {
        if (topic === 'down') throw new KafkaJSProtocolError({ type: 'NOT_LEADER_FOR_PARTITION', code: 6, retriable: true, message: 'leader moved' } as never);
        if (big(messages)) throw tooLarge();
      };
      await failsKeepingAll(publish, 'leader moved', 2);
    });

    it('keeps retrying, setting nothing aside, on a refusal that is not about the rows (authorization)', async () => {
      await write(10);
      const publish = async () => {
        throw new KafkaJSNonRetriableError(new KafkaJSProtocolError({ type: 'TOPIC_AUTHORIZATION_FAILED', code: 29, retriable: false, message: 'not authorized' } as never));
      };
      await failsKeepingAll(publish, 'not authorized', 1);
    });

    it('rolls back what it set aside when the isolation meets a failure that may pass', async () => {
      await ds.query(`INSERT INTO ${table} (topic, key, value) VALUES ('t', 'a', '{"big":true}'), ('t', 'b', '{}'), ('t', 'c', '{}')`);
      let calls = 0;
      const publish = async (_topic: string, messages: OutboxMessage[]) => {
        calls++;
        if (calls === 3) throw new Error('connection closed');
        if (big(messages)) throw tooLarge();
      };
      await failsKeepingAll(publish, 'connection closed', 3);
    });

    it('reports the rows waiting in the dead letters as a gauge per outbox', async () => {
      await ds.query(`INSERT INTO ${table} (topic, key, value) VALUES ('t', 'a', '{"big":true}'), ('t', 'b', '{}')`);
      const metrics = new Registry();
      const pump = new OutboxPump(ds, { table, publish: broker().publish, metrics });
      pump.start();
      await pause(300);
      await pump.stop();
      expect((await metrics.getSingleMetric('meld_outbox_dead_letters')!.get()).values).toEqual([{ labels: { outbox: table }, value: 1 }]);
    });
  });

  it('refuses a table name that is not a plain identifier', () => {
    for (const table of ['outbox"; DROP TABLE outbox; --', 'Outbox', 'public.outbox', '']) {
      expect(() => new OutboxPump(ds, { table, publish: async () => undefined, metrics: new Registry() })).toThrow(/not a plain identifier/);
    }
  });
});


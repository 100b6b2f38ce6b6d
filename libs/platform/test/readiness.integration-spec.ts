import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { TcpProxy, testEnv, waitFor } from '@meld/testing';
import { bootstrapApp, meldAppModule } from '../src';

// "Stopping a store turns /readyz to 503 naming the store, and back to 200 when it returns."
// Postgres, Redis and ClickHouse are cut with a TCP proxy (what a client sees when the
// server dies, without stopping the stores other tests share); Kafka is a private dev
// broker taken down and up with SIGUSR1 / SIGUSR2.
 
const stack = require(join(__dirname, '../../../tools/stack'));

type Ready = { status: number; body: { error?: Record<string, { message?: string }>; details?: Record<string, { status: string }> } };

describe('readiness follows the stores', () => {
  const env = testEnv();
  const proxies: Record<string, TcpProxy> = {};
  let broker: { name: string; brokers: string; pid: number };
  let app: INestApplication;
  let base: string;

  const readyz = async (): Promise<Ready> => {
    const res = await fetch(`${base}/readyz`);
    return { status: res.status, body: (await res.json()) as Ready['body'] };
  };
  const downStores = (r: Ready) => Object.keys(r.body.error ?? {}).sort();

  beforeAll(async () => {
    proxies.postgres = await TcpProxy.start(env.postgresUrl);
    proxies.redis = await TcpProxy.start(env.redisUrl);
    proxies.clickhouse = await TcpProxy.start(env.clickhouseUrl);
    broker = await stack.startBroker({ name: `readyz-spec-${process.pid}` });
    const appEnv = {
      LOG_LEVEL: 'silent',
      MELD_ALLOW_DEV_SECRETS: '1',
      MELD_POSTGRES_URL: proxies.postgres.via(env.postgresUrl),
      MELD_REDIS_URL: proxies.redis.via(env.redisUrl),
      MELD_CLICKHOUSE_URL: proxies.clickhouse.via(env.clickhouseUrl),
      MELD_CLICKHOUSE_DB: env.clickhouseDatabase,
      MELD_KAFKA_BROKERS: broker.brokers,
    };
    const def = { name: 'readyz-spec', port: 0, stores: ['postgres', 'redis', 'clickhouse', 'kafka'] as const };
    app = await bootstrapApp({ app: def.name, module: meldAppModule({ ...def, stores: [...def.stores] }, appEnv), host: '127.0.0.1', port: 0 });
    base = await app.getUrl();
    base = base.replace('[::1]', '127.0.0.1');
    await waitFor('all stores ready', async () => (await readyz()).status === 200, { timeoutMs: 20000 });
  }, 40000);

  afterAll(async () => {
    await app?.close();
    await Promise.all(Object.values(proxies).map((p) => p.stop()));
    if (broker) await stack.stopBroker(broker.name);
  });

  it.each(['postgres', 'redis', 'clickhouse'])('503 naming %s while it is down, 200 when it is back', async (store) => {
    await proxies[store].stop();
    const down = await waitFor(`readyz 503 naming ${store}`, async () => {
      const r = await readyz();
      return r.status === 503 && downStores(r).includes(store) ? r : undefined;
    });
    expect(downStores(down)).toEqual([store]);
    await proxies[store].resume();
    await waitFor(`readyz back to 200 after ${store} returns`, async () => (await readyz()).status === 200, { timeoutMs: 20000 });
  });

  it('503 naming kafka while the broker is down, 200 when it is back', async () => {
    process.kill(broker.pid, 'SIGUSR1');
    const down = await waitFor('readyz 503 naming kafka', async () => {
      const r = await readyz();
      return r.status === 503 && downStores(r).includes('kafka') ? r : undefined;
    });
    expect(downStores(down)).toEqual(['kafka']);
    process.kill(broker.pid, 'SIGUSR2');
    await waitFor('readyz back to 200 after kafka returns', async () => (await readyz()).status === 200, { timeoutMs: 20000 });
  });
});

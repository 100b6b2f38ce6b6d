import type { ReadinessCheck } from './readiness-check';

// Structural types keep platform free of the store libraries; each app passes its clients in.

export function postgresCheck(ds: { isInitialized: boolean; query(sql: string): Promise<unknown> }): ReadinessCheck {
  return {
    name: 'postgres',
    async check() {
      if (!ds.isInitialized) throw new Error('not connected yet');
      await ds.query('SELECT 1');
    },
  };
}

export function redisCheck(redis: { ping(): Promise<string>; status: string }): ReadinessCheck {
  return {
    name: 'redis',
    async check() {
      // Asking a disconnected client would queue the PING until reconnect; report the state instead.
      if (redis.status !== 'ready') throw new Error(`connection ${redis.status}`);
      await redis.ping();
    },
  };
}

export function clickhouseCheck(ch: { assertReady(): Promise<void> }): ReadinessCheck {
  return { name: 'clickhouse', check: () => ch.assertReady() };
}

export function kafkaCheck(kafka: { ping(signal: AbortSignal): Promise<void> }): ReadinessCheck {
  return { name: 'kafka', check: (signal) => kafka.ping(signal) };
}

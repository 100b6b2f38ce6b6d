import { z } from 'zod';
import { envVars, loadConfig } from '../config/load-config';

export type StoreName = 'postgres' | 'redis' | 'clickhouse' | 'kafka';

const storeEnv = {
  postgres: { MELD_POSTGRES_URL: envVars.postgresUrl },
  redis: { MELD_REDIS_URL: envVars.redisUrl, MELD_REDIS_TIMEOUT_MS: envVars.redisTimeoutMs },
  clickhouse: { MELD_CLICKHOUSE_URL: envVars.clickhouseUrl, MELD_CLICKHOUSE_DB: envVars.clickhouseDb },
  kafka: { MELD_KAFKA_BROKERS: envVars.kafkaBrokers },
} as const;

export interface StoreConfig {
  postgresUrl?: string;
  redisUrl?: string;
  /** Longest wait for one Redis command on a request path (ADR 0122). */
  redisTimeoutMs?: number;
  clickhouseUrl?: string;
  clickhouseDb?: string;
  kafkaBrokers?: string[];
}

/** Validates only the variables of the stores an app declares it needs. */
export function loadStoreConfig(stores: StoreName[], env: NodeJS.ProcessEnv = process.env): StoreConfig {
  const shape = Object.assign({}, ...stores.map((s) => storeEnv[s]));
  const parsed = loadConfig(z.object(shape), env) as Record<string, never>;
  return {
    postgresUrl: parsed.MELD_POSTGRES_URL,
    redisUrl: parsed.MELD_REDIS_URL,
    redisTimeoutMs: parsed.MELD_REDIS_TIMEOUT_MS,
    clickhouseUrl: parsed.MELD_CLICKHOUSE_URL,
    clickhouseDb: parsed.MELD_CLICKHOUSE_DB,
    kafkaBrokers: parsed.MELD_KAFKA_BROKERS,
  };
}

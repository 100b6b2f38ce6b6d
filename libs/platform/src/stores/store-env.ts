import { z } from 'zod';
import { envVars, loadConfig } from '../config/load-config';

export type StoreName = 'postgres' | 'redis' | 'clickhouse' | 'kafka';

const storeEnv = {
  postgres: { MELD_POSTGRES_URL: envVars.postgresUrl },
  redis: { MELD_REDIS_URL: envVars.redisUrl },
  clickhouse: { MELD_CLICKHOUSE_URL: envVars.clickhouseUrl, MELD_CLICKHOUSE_DB: envVars.clickhouseDb },
  kafka: { MELD_KAFKA_BROKERS: envVars.kafkaBrokers },
} as const;

export interface StoreConfig {
  postgresUrl?: string;
  redisUrl?: string;
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
    clickhouseUrl: parsed.MELD_CLICKHOUSE_URL,
    clickhouseDb: parsed.MELD_CLICKHOUSE_DB,
    kafkaBrokers: parsed.MELD_KAFKA_BROKERS,
  };
}

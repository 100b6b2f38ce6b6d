import { DEFAULT_REQUEST_TIMEOUT_MS } from '@meld/db';
import { z } from 'zod';
import { envVars, loadConfig } from '../config/load-config';

export type StoreName = 'postgres' | 'redis' | 'clickhouse' | 'kafka';

const storeEnv = {
  postgres: {
    MELD_POSTGRES_URL: envVars.postgresUrl,
    // Connections of the app's pool, at most: each pod's share of Postgres's max_connections (docs/deploy.md).
    MELD_POSTGRES_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
    // Longest wait for a statement's answer on a request path, then a 503 (ADR 0360).
    MELD_POSTGRES_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(DEFAULT_REQUEST_TIMEOUT_MS),
  },
  redis: { MELD_REDIS_URL: envVars.redisUrl, MELD_REDIS_TIMEOUT_MS: envVars.redisTimeoutMs },
  clickhouse: {
    MELD_CLICKHOUSE_URL: envVars.clickhouseUrl,
    MELD_CLICKHOUSE_DB: envVars.clickhouseDb,
    // ADR 0114: the reads a request makes run as a read-only user, bounded in time and memory.
    MELD_CLICKHOUSE_READ_URL: envVars.clickhouseUrl.optional(),
    MELD_CLICKHOUSE_MAX_EXECUTION_TIME: z.coerce.number().int().min(1).max(3600).default(10),
    MELD_CLICKHOUSE_MAX_MEMORY_USAGE: z.coerce.number().int().min(1).default(1_000_000_000),
  },
  kafka: { MELD_KAFKA_BROKERS: envVars.kafkaBrokers },
} as const;

export interface StoreConfig {
  postgresUrl?: string;
  /** Most connections the app's pool opens (`MELD_POSTGRES_POOL_SIZE`). */
  postgresPoolSize?: number;
  /** Longest wait for a statement's answer on a request path (`MELD_POSTGRES_REQUEST_TIMEOUT_MS`, ADR 0360). */
  postgresRequestTimeoutMs?: number;
  redisUrl?: string;
  /** Longest wait for one Redis command on a request path (ADR 0122). */
  redisTimeoutMs?: number;
  clickhouseUrl?: string;
  clickhouseDb?: string;
  /** A read-only ClickHouse user for request reads (credentials in the URL); unset: the main user with readonly=2. */
  clickhouseReadUrl?: string;
  /** Seconds and bytes every request read may use (max_execution_time, max_memory_usage). */
  clickhouseMaxExecutionTime?: number;
  clickhouseMaxMemoryUsage?: number;
  kafkaBrokers?: string[];
}

/** Validates only the variables of the stores an app declares it needs. */
export function loadStoreConfig(stores: StoreName[], env: NodeJS.ProcessEnv = process.env): StoreConfig {
  const shape = Object.assign({}, ...stores.map((s) => storeEnv[s]));
  const parsed = loadConfig(z.object(shape), env) as Record<string, never>;
  return {
    postgresUrl: parsed.MELD_POSTGRES_URL,
    postgresPoolSize: parsed.MELD_POSTGRES_POOL_SIZE,
    postgresRequestTimeoutMs: parsed.MELD_POSTGRES_REQUEST_TIMEOUT_MS,
    redisUrl: parsed.MELD_REDIS_URL,
    redisTimeoutMs: parsed.MELD_REDIS_TIMEOUT_MS,
    clickhouseUrl: parsed.MELD_CLICKHOUSE_URL,
    clickhouseDb: parsed.MELD_CLICKHOUSE_DB,
    clickhouseReadUrl: parsed.MELD_CLICKHOUSE_READ_URL,
    clickhouseMaxExecutionTime: parsed.MELD_CLICKHOUSE_MAX_EXECUTION_TIME,
    clickhouseMaxMemoryUsage: parsed.MELD_CLICKHOUSE_MAX_MEMORY_USAGE,
    kafkaBrokers: parsed.MELD_KAFKA_BROKERS,
  };
}

import { DataSource } from 'typeorm';
import { entities } from './entities';
import { migrations } from './migrations';
import { requestBoundClient } from './request-bound';

export interface DataSourceOptions {
  url: string;
  applicationName: string;
  poolSize?: number;
  /** Longest wait for a statement's answer on a request path (`MELD_POSTGRES_REQUEST_TIMEOUT_MS`, ADR 0360); default 5 s. */
  requestTimeoutMs?: number;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;

/** The one way Meld opens Postgres: TypeORM over pg, entities and migrations listed explicitly. */
export function createDataSource(options: DataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
    entities,
    migrations,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    poolSize: options.poolSize ?? 10,
    // Idle connections stay open 5 min, not pg's 10 s: a new one costs a Postgres backend fork
    // and a cold catalog cache for its first statements, and under a steady load whose
    // concurrency wavers the 10 s default closed and reopened connections all the time, each
    // reopening landing on a request already waiting (ADR 0079).
    // connectionTimeoutMillis bounds a handshake and the wait for a free connection; a request's
    // statements have their own bound, other work none (ADR 0360).
    extra: {
      application_name: options.applicationName,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 300_000,
      Client: requestBoundClient(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
    },
    // Not 'error': TypeORM prints a failed query with its parameters (phones, emails, texts) to
    // stderr, around pino. The error itself reaches the caller, whose log line keeps only what
    // may be logged (ADR 0338).
    logging: ['warn', 'migration'],
  });
}

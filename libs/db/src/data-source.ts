import { DataSource } from 'typeorm';
import { entities } from './entities';
import { migrations } from './migrations';

export interface DataSourceOptions {
  url: string;
  applicationName: string;
  poolSize?: number;
}

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
    extra: { application_name: options.applicationName, connectionTimeoutMillis: 5000, idleTimeoutMillis: 300_000 },
    // Not 'error': TypeORM prints a failed query with its parameters (phones, emails, texts) to
    // stderr, around pino. The error itself reaches the caller, whose log line keeps only what
    // may be logged (ADR 0338).
    logging: ['warn', 'migration'],
  });
}

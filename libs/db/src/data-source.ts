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
    extra: { application_name: options.applicationName, connectionTimeoutMillis: 5000 },
    logging: ['error', 'warn', 'migration'],
  });
}

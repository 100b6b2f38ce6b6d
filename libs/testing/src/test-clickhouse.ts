import { type ClickHouse, createClickHouse, migrateClickHouse } from '@meld/clickhouse';
import { testEnv } from './test-env';

/**
 * A client of the test run's ClickHouse database (testEnv's, whose name must say "test"),
 * created and migrated to the latest schema; the caller closes it.
 */
export async function migratedTestClickHouse(): Promise<ClickHouse> {
  const env = testEnv();
  const ch = createClickHouse({ url: env.clickhouseUrl, database: env.clickhouseDatabase });
  await ch.ensureDatabase();
  await migrateClickHouse({ client: ch });
  return ch;
}

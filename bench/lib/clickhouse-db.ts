import { createClickHouse, ident, migrateClickHouse, sql, type ClickHouse } from '../../libs/clickhouse/src';

/** A ClickHouse database of the bench's own, with every migration applied; dropped by `drop()`. */
export interface BenchClickHouse {
  ch: ClickHouse;
  database: string;
  drop(): Promise<void>;
}

/**
 * Sinks under test write into a database created for the run, so the figures do not depend on
 * what the dev database already holds and nothing is left behind (1M rows in the dev `events`
 * table would slow every later read of it).
 */
export async function benchClickHouse(url: string, database: string, maxOpenConnections = 4): Promise<BenchClickHouse> {
  const ch = createClickHouse({ url, database, application: 'meld-bench', maxOpenConnections, requestTimeoutMs: 120_000 });
  await ch.ensureDatabase();
  await migrateClickHouse({ client: ch });
  return {
    ch,
    database,
    async drop() {
      await ch.command(sql`DROP DATABASE IF EXISTS ${ident(database)}`).catch(() => undefined);
      await ch.close();
    },
  };
}

import { createDataSource, createOwnDatabase } from '../../libs/db/src';
import type { DataSource } from 'typeorm';

/** A Postgres database of the bench's own, migrated; dropped by `drop()`. */
export interface BenchPostgres {
  url: string;
  db: DataSource;
  /** Pids of the server processes serving this database (for CPU accounting). */
  backendPids(): Promise<number[]>;
  drop(): Promise<void>;
}

/**
 * Apps under test get a database created for the run: a 1M-event run leaves a million
 * `event_ids` rows behind, and later runs would measure a bigger index than the first.
 * `database` must be a plain lower-case identifier (the bench makes it from random hex).
 */
export async function benchPostgres(serverUrl: string, database: string): Promise<BenchPostgres> {
  const own = await createOwnDatabase(serverUrl, database);
  const db = await createDataSource({ url: own.url, applicationName: 'meld-bench', poolSize: 4 }).initialize();
  return {
    url: own.url,
    db,
    async backendPids() {
      const rows: Array<{ pid: number }> = await db.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`);
      return rows.map((r) => r.pid);
    },
    async drop() {
      await db.destroy().catch(() => undefined);
      await own.drop();
    },
  };
}

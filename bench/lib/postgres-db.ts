import { Client } from 'pg';
import { createDataSource, migratePostgres } from '../../libs/db/src';
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
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`bad bench database name ${database}`);
  const admin = new Client({ connectionString: serverUrl, application_name: 'meld-bench' });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  await migratePostgres(url.toString(), () => undefined);
  const db = await createDataSource({ url: url.toString(), applicationName: 'meld-bench', poolSize: 4 }).initialize();
  return {
    url: url.toString(),
    db,
    async backendPids() {
      const rows: Array<{ pid: number }> = await db.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`);
      return rows.map((r) => r.pid);
    },
    async drop() {
      await db.destroy().catch(() => undefined);
      const c = new Client({ connectionString: serverUrl, application_name: 'meld-bench' });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

import { Client } from 'pg';
import { migratePostgres } from './migrate';

export interface OwnDatabase {
  url: string;
  /** Drops the database, its open connections too. */
  drop(): Promise<void>;
}

/**
 * A migrated database of the caller's own on the server of `serverUrl` (a test suite, a bench
 * run): recreated if a crashed run left it behind. `name` must be a plain lower-case identifier.
 */
export async function createOwnDatabase(serverUrl: string, name: string): Promise<OwnDatabase> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  const admin = async (sql: string) => {
    const client = new Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  await migratePostgres(url.toString(), () => undefined);
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

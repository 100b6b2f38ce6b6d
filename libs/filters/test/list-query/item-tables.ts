import { testEnv } from '@meld/testing';
import { Client } from 'pg';

/** A connection holding empty temporary tables of ITEMS (test-resource.ts); temporary tables are its own. */
export async function itemTables(): Promise<Client> {
  const db = new Client({ connectionString: testEnv().postgresUrl });
  await db.connect();
  await db.query(`CREATE TEMP TABLE list_query_items (id text PRIMARY KEY, name text, score numeric, created_at timestamptz, active boolean, attributes jsonb NOT NULL)`);
  await db.query(`CREATE TEMP TABLE list_query_tags (item_id text NOT NULL, label text NOT NULL)`);
  return db;
}

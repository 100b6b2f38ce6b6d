import type { DataSource } from 'typeorm';

/** The part of a pooled pg client the event write uses. */
export interface PgClient {
  query<R>(query: { text: string; values?: unknown[] }): Promise<{ rows: R[] }>;
  query<R>(text: string): Promise<{ rows: R[] }>;
}

interface PgPoolClient extends PgClient {
  release(destroy?: boolean): void;
}

/** pg's Pool: `query` takes a connection for the one statement and gives it back. */
interface PgPool extends PgClient {
  connect(): Promise<PgPoolClient>;
}

/**
 * TypeORM's pg pool, for the event write's few statements. TypeORM's query runner and
 * entity manager cost more CPU per statement than the statement's own protocol work
 * (measured: ~11% of ingest's CPU per event went through PostgresQueryRunner.query), and
 * the hot path needs none of it: its statements are raw SQL already.
 */
export function pgPool(ds: DataSource): PgPool {
  return (ds.driver as unknown as { master: PgPool }).master;
}

/**
 * BEGIN, `work`, COMMIT on one pooled connection; ROLLBACK when `work` or COMMIT throws. A
 * connection whose ROLLBACK fails too is destroyed rather than handed to the next caller in
 * an unknown state.
 */
export async function inTransaction<T>(ds: DataSource, work: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pgPool(ds).connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw err;
  } finally {
    client.release(broken);
  }
}

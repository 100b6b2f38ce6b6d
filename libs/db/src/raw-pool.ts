import type { Pool, PoolClient } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * The pg pool under a TypeORM DataSource, for hot paths whose statements are raw SQL already:
 * TypeORM's query runner and entity manager cost more CPU per statement than the statement's
 * own protocol work (ingest's event write: ~11% of its CPU per event went through
 * PostgresQueryRunner.query). `driver.master` is TypeORM's name for it (not a public API: the
 * libs/db tests cover it, so an upgrade that renames it fails there).
 */
export function rawPool(ds: DataSource): Pool {
  const pool = (ds.driver as unknown as { master?: Pool }).master;
  if (!pool) throw new Error('the DataSource has no pg pool (not initialized, or TypeORM renamed driver.master)');
  return pool;
}

/**
 * BEGIN, `work`, COMMIT on one connection of the raw pool; ROLLBACK when `work` or COMMIT
 * throws. A connection whose ROLLBACK fails too is destroyed rather than handed to the next
 * caller in an unknown state.
 */
export async function inRawTransaction<T>(ds: DataSource, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await rawPool(ds).connect();
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

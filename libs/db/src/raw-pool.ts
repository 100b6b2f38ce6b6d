import type { Pool, PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import { PostgresUnavailableError } from './request-bound';

/**
 * The pg pool under a TypeORM DataSource, for hot paths whose statements are raw SQL already:
 * TypeORM's query runner and entity manager cost more CPU per statement than the statement's
 * own protocol work (ingest's event write: ~11% of its CPU per event went through
 * PostgresQueryRunner.query). `driver.master` is TypeORM's name for it (not a public API: the
 * libs/db tests cover it, so an upgrade that renames it fails there).
 */
export function rawPool(ds: DataSource): Pool {
  if (!ds.isInitialized) throw new PostgresUnavailableError('postgres is not connected yet');
  const pool = (ds.driver as unknown as { master?: Pool }).master;
  if (!pool) throw new Error('the DataSource has no pg pool (not initialized, or TypeORM renamed driver.master)');
  return pool;
}

/**
 * BEGIN, `work`, COMMIT on one connection of the raw pool; ROLLBACK when `work` or COMMIT
 * throws.
 */
export async function inRawTransaction<T>(ds: DataSource, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await rawPool(ds).connect();
  let result: T;
  try {
    await client.query('BEGIN');
    result = await work(client);
    await client.query('COMMIT');
  } catch (err) {
    await rollbackAndRelease(client);
    throw err;
  }
  client.release();
  return result;
}

/** A connection whose ROLLBACK fails too is destroyed rather than handed to the next caller in an unknown state. */
async function rollbackAndRelease(client: PoolClient): Promise<void> {
  let broken = false;
  await client.query('ROLLBACK').catch(() => (broken = true));
  client.release(broken);
}

/** A transaction opened by `beginWith`, its first statement's rows in hand. */
export interface OpenTransaction<R> {
  client: PoolClient;
  /** Rows of the statement sent with BEGIN. */
  rows: R[];
  /** COMMIT and release the connection. */
  commit(): Promise<void>;
  /** ROLLBACK (if still open) and release the connection; safe to call after commit. */
  release(): Promise<void>;
}

/**
 * BEGIN and a first statement in one round trip: one simple-protocol query `BEGIN; <sql>`
 * (the extended protocol pg uses for parameters takes one statement per round trip, and pg
 * does not pipeline). So `sql` carries its values as literals: the caller builds it with
 * `escapeLiteral` (pg's) for every value that is not a constant. A hot path's transaction
 * then costs one round trip less; on a shared box each round trip is a wait for a core.
 *
 * `asyncCommit`: COMMIT returns before its WAL is flushed (`synchronous_commit = off` for this
 * transaction only). A Postgres crash can then lose the last ~0.6 s of such commits, never
 * half of one: only for writes whose durable copy is elsewhere. *
 * `settings`: settings for this transaction only (`set_config(…, true)`, as `SET LOCAL`; sent with
 * BEGIN; names and values are the caller's constants), in force for every statement it runs,
 * the plans of named statements made in it included.
 */
export async function beginWith<R>(ds: DataSource, sql: string, o: { asyncCommit?: boolean; settings?: Readonly<Record<string, string>> } = {}): Promise<OpenTransaction<R>> {
  const client = await rawPool(ds).connect();
  let rows: R[];
  try {
    const settings = { ...o.settings, ...(o.asyncCommit ? { synchronous_commit: 'off' } : {}) };
    // One statement for all the settings: each statement of the round trip is parsed on its own.
    const entries = Object.entries(settings);
    const setup = entries.length ? `BEGIN; SELECT ${entries.map(([name, value]) => `set_config('${name}', '${value}', true)`).join(', ')};` : 'BEGIN;';
    const results = (await client.query(`${setup} ${sql}`)) as unknown as Array<{ rows: R[] }>;
    rows = results[results.length - 1].rows;
  } catch (err) {
    await rollbackAndRelease(client);
    throw err;
  }
  let done = false;
  return {
    client,
    rows,
    async commit() {
      if (done) throw new Error('the transaction is no longer open');
      done = true;
      try {
        await client.query('COMMIT');
      } catch (err) {
        await rollbackAndRelease(client);
        throw err;
      }
      client.release();
    },
    async release() {
      if (done) return;
      done = true;
      await rollbackAndRelease(client);
    },
  };
}

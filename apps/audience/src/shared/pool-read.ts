import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * Rows of a read-only statement straight from the DataSource's pg pool (ADR 0233): the
 * per-request reads skip TypeORM's query runner (acquire, events, result wrapping, release),
 * which costs more than the statement's own client work. Errors are pg's own, whose `code`
 * the error filter reads as it reads TypeORM's `driverError.code`. Before the DataSource is
 * connected there is no pool: TypeORM answers (its "not connected" error).
 */
export async function poolRead<T>(ds: DataSource, sql: string, params: unknown[]): Promise<T[]> {
  const pool = (ds.driver as unknown as { master?: Pool }).master;
  if (!pool) return ds.query(sql, params);
  return (await pool.query(sql, params)).rows as T[];
}

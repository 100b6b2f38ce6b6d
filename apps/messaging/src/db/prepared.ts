import { rawPool } from '@meld/db';
import type { QueryResultRow } from 'pg';
import type { DataSource } from 'typeorm';

/**
 * Runs `text` as the named prepared statement `name` (ADR 0255) on the raw pool: each
 * connection parses and plans it once, then Postgres reuses a generic plan, where an unnamed
 * statement was planned at every call (for the send's context read, planning cost five times
 * the execution). `name` must always go with the same text.
 */
export async function prepared<T extends QueryResultRow>(ds: DataSource, name: string, text: string, values: unknown[]): Promise<T[]> {
  return (await rawPool(ds).query<T>({ name: `meld-messaging-${name}`, text, values })).rows;
}

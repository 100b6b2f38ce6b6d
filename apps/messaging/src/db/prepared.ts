import { createHash } from 'node:crypto';
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

/**
 * A prepared statement's name for a text built at run time (ADR 0322): the same text always
 * gets the same name, as pg keeps one text per name and connection.
 */
export function statementName(prefix: string, text: string): string {
  return `meld-messaging-${prefix}-${createHash('sha1').update(text).digest('base64url').slice(0, 16)}`;
}

/**
 * Runs `text` unnamed on the raw pool: Postgres plans it at each call, for the table's size
 * then. For statements over tables that grow fast from empty (ADR 0275): a generic plan made
 * while `sms_messages` or `webhook_deliveries` held a few pages kept its sequential scan when
 * they held thousands of rows, and no ANALYZE had yet run to replace it.
 */
export async function planned<T extends QueryResultRow>(ds: DataSource, text: string, values: unknown[]): Promise<T[]> {
  return (await rawPool(ds).query<T>(text, values)).rows;
}

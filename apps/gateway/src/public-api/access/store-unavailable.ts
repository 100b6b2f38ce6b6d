import { errorSummary, LoggableError } from '@meld/contracts';

/**
 * Postgres did not answer a lookup the gateway needs to decide: the request gets 503, never a guess.
 * Its message is logged whole, so it names the driver error by class and code only: a lookup's
 * error text can quote the token or id it was given (ADR 0338).
 */
export class StoreUnavailable extends LoggableError {}

export async function query<T>(ds: { isInitialized: boolean; query(sql: string, params?: unknown[]): Promise<unknown> }, sql: string, params: unknown[]): Promise<T[]> {
  if (!ds.isInitialized) throw new StoreUnavailable('postgres is not connected');
  try {
    return (await ds.query(sql, params)) as T[];
  } catch (err) {
    throw new StoreUnavailable(`postgres: ${errorSummary(err)}`, { cause: err });
  }
}

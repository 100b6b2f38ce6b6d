/** Postgres did not answer a lookup the gateway needs to decide: the request gets 503, never a guess. */
export class StoreUnavailable extends Error {}

export async function query<T>(ds: { isInitialized: boolean; query(sql: string, params?: unknown[]): Promise<unknown> }, sql: string, params: unknown[]): Promise<T[]> {
  if (!ds.isInitialized) throw new StoreUnavailable('postgres is not connected');
  try {
    return (await ds.query(sql, params)) as T[];
  } catch (err) {
    throw new StoreUnavailable(`postgres: ${(err as Error).message}`);
  }
}

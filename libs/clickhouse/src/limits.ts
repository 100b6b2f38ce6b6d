import { clickHouseErrorCode } from './client';

/** The query limits every read for a request runs under (ADR 0114). */
export type QueryLimit = 'max_execution_time' | 'max_memory_usage';

/** 159 TIMEOUT_EXCEEDED, 241 MEMORY_LIMIT_EXCEEDED. */
const LIMIT_CODES = new Map<number, QueryLimit>([
  [159, 'max_execution_time'],
  [241, 'max_memory_usage'],
]);

/**
 * The limit a failed read ran into, if any. The client's own timeout ("Timeout error.") is set a
 * little above max_execution_time, so it means the same limit: ClickHouse did not stop in time.
 */
export function exceededLimit(error: unknown): QueryLimit | undefined {
  const code = clickHouseErrorCode(error);
  if (code !== undefined) return LIMIT_CODES.get(code);
  return (error as { message?: unknown } | null)?.message === 'Timeout error.' ? 'max_execution_time' : undefined;
}

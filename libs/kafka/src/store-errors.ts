import { clickHouseErrorCode } from '@meld/clickhouse';

/**
 * Is this the store being unavailable rather than the message being bad? Such errors pause the
 * partition and retry until the store answers, never dead-letter (ADR 0111): a message that
 * failed only because Postgres restarted is a good message.
 *
 * Walks the error's causes (`cause`, TypeORM's `driverError`, AggregateError's `errors`): pg-pool
 * wraps a refused connection in "Connection terminated due to connection timeout", TypeORM wraps
 * the driver error, and Node's happy-eyeballs connect throws an AggregateError of ECONNREFUSEDs.
 */
export function isTransientStoreError(error: unknown): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const e = pending.pop();
    if (e === null || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    if (isTransientItself(e as ErrorLike)) return true;
    const { cause, driverError, errors } = e as ErrorLike;
    pending.push(cause, driverError);
    if (Array.isArray(errors)) pending.push(...errors);
  }
  return false;
}

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  driverError?: unknown;
  errors?: unknown;
}

/** Socket-level failures: the store is not there (yet), or went away mid-request. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED', 'UND_ERR_SOCKET']);

/**
 * Postgres SQLSTATEs that say "try again later": 57P01-03 (admin shutdown, crash shutdown,
 * cannot connect now), 53300 (too many connections), 40001/40P01 (serialization failure,
 * deadlock), 57014 (statement timeout or cancel). Class 08 (connection exceptions) is matched whole.
 */
const PG_TRANSIENT = new Set(['57P01', '57P02', '57P03', '53300', '40001', '40P01', '57014']);

/** Texts of driver errors that carry no code (pg, pg-pool, @clickhouse/client, TypeORM). */
const TRANSIENT_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^timeout expired$/,
  /^Query read timeout$/,
  /^Client has encountered a connection error/,
  /^Timeout error\.$/,
  /^socket hang up$/,
];

/**
 * ClickHouse server codes of an overloaded or unreachable server, not of a bad row: 159
 * TIMEOUT_EXCEEDED, 202 TOO_MANY_SIMULTANEOUS_QUERIES, 209 SOCKET_TIMEOUT, 210 NETWORK_ERROR,
 * 242 TABLE_IS_READ_ONLY, 252 TOO_MANY_PARTS, 319 UNKNOWN_STATUS_OF_INSERT.
 */
const CLICKHOUSE_TRANSIENT = new Set([159, 202, 209, 210, 242, 252, 319]);

function isTransientItself(e: ErrorLike): boolean {
  const code = e.code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    // A SQLSTATE is five characters; ClickHouse codes are digits of another length (or the same, never 40001).
    if (code.length === 5 && (code.startsWith('08') || PG_TRANSIENT.has(code))) return true;
  }
  const message = typeof e.message === 'string' ? e.message : '';
  if (TRANSIENT_MESSAGES.some((re) => re.test(message))) return true;
  const ch = clickHouseErrorCode(e);
  return ch !== undefined && CLICKHOUSE_TRANSIENT.has(ch);
}

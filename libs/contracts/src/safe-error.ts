/**
 * What of an error may reach a log line (ADR 0338). pino's default `err` serializer copies every
 * enumerable property: a pg error's `detail` (`Key (email)=(jane@x.com) already exists.`) and
 * `where` (the JSON text being parsed), TypeORM's `query`, `parameters` and `driverError`, each
 * able to carry a phone, an email or an SMS text. Only the type, the codes, schema names, the
 * message and the stack's frames are kept, and the message itself is withheld where it quotes
 * input: Postgres's data exceptions and integrity violations (SQLSTATE classes 22 and 23:
 * `invalid input syntax for type uuid: "+336…"`), JSON.parse's SyntaxError and ClickHouse's
 * server errors (a row's text, a query's literals).
 */
type ErrorLike = Error & { code?: unknown; driverError?: { code?: unknown; constraint?: unknown; table?: unknown }; constraint?: unknown; table?: unknown };

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** The SQLSTATE of a pg error, or of the driver error TypeORM wraps. */
export function sqlStateOf(err: unknown): string | undefined {
  const e = err as ErrorLike | null;
  if (typeof e !== 'object' || e === null) return undefined;
  for (const code of [e.code, e.driverError?.code]) if (typeof code === 'string' && SQLSTATE.test(code)) return code;
  return undefined;
}

/**
 * A ClickHouse server error: @clickhouse/client's ClickHouseError (current servers: a numeric
 * `code` and a `type` such as UNKNOWN_TABLE), or the plain Error it leaves for 18.16's
 * "Code: 27, e.displayText() = DB::Exception: …", whose code is only in the text.
 */
const CLICKHOUSE_TEXT = /^Code: (\d{1,5})\b.*?DB::Exception\b/s;
const CLICKHOUSE_TYPE = /^[A-Z][A-Z0-9_]{2,63}$/;

function clickHouseServerError(err: unknown): { code: string; type?: string } | undefined {
  if (!(err instanceof Error)) return undefined;
  const { code, type } = err as { code?: unknown; type?: unknown };
  if (err.constructor?.name === 'ClickHouseError' && typeof code === 'string' && /^\d{1,5}$/.test(code)) {
    return typeof type === 'string' && CLICKHOUSE_TYPE.test(type) ? { code, type } : { code };
  }
  const match = CLICKHOUSE_TEXT.exec(err.message);
  return match ? { code: match[1]! } : undefined;
}

/** The error's message, unless it can quote the input that caused it. */
export function safeErrorMessage(err: unknown): string {
  const state = sqlStateOf(err);
  if (state !== undefined && (state.startsWith('22') || state.startsWith('23'))) return `database error ${state} (its text can quote the input: not logged)`;
  if (err instanceof SyntaxError) return 'SyntaxError (its text can quote the input: not logged)';
  // ClickHouse quotes the rest of a row it cannot parse ("… before: jane@x.com …") and the query
  // with its literals; the server keeps the text in system.query_log (ADR 0338).
  const clickHouse = clickHouseServerError(err);
  if (clickHouse) return `ClickHouse error ${clickHouse.code}${clickHouse.type ? ` ${clickHouse.type}` : ''} (its text can quote the input: not logged)`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * An error whose message is built only from constants, codes and ids of ours (an SMPP status, a
 * message id the SMSC issued), never from input, a contact's data or a store's answer: a log line
 * may quote it whole (errorSummary, ADR 0338).
 */
export class LoggableError extends Error {}

/** A code worth logging: a Node errno (ECONNRESET), a SQLSTATE, a library's constant. */
const ERROR_CODE = /^[A-Za-z0-9_.:-]{1,64}$/;

function codeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'number' && Number.isInteger(code)) return String(code);
  if (typeof code === 'string' && ERROR_CODE.test(code)) return code;
  return sqlStateOf(err);
}

/**
 * What a log line written by hand says of an error (ADR 0338): its class and its code (its own,
 * or its cause's: `TypeError ECONNREFUSED` for a failed fetch), never its message, which can
 * quote a value: a Postgres error on a receipt's or a contact's row, a trigger's RAISE built from
 * the row, a driver or parser quoting its input. A LoggableError's message, ours and built from
 * constants, follows.
 */
export function errorSummary(err: unknown): string {
  if (!(err instanceof Error)) return `a thrown ${err === null ? 'null' : typeof err}`;
  const name = err.constructor?.name || 'Error';
  const code = codeOf(err) ?? codeOf(err.cause);
  const kind = code === undefined ? name : `${name} ${code}`;
  return err instanceof LoggableError ? `${kind}: ${err.message}` : kind;
}

/** pino's `err` serializer (loggerOptions). */
export function serializeError(err: unknown): Record<string, unknown> {
  if (typeof err !== 'object' || err === null) return { message: safeErrorMessage(err) };
  const e = err as ErrorLike;
  const message = safeErrorMessage(e);
  const code = typeof e.code === 'string' || typeof e.code === 'number' ? e.code : sqlStateOf(e);
  const names = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const constraint = names(e.constraint) ?? names(e.driverError?.constraint);
  const table = names(e.table) ?? names(e.driverError?.table);
  // The stack's first lines are the message again: only its frames are kept.
  const frames = typeof e.stack === 'string' && e.stack.includes('\n    at ') ? e.stack.slice(e.stack.indexOf('\n    at ')) : '';
  return {
    type: e.constructor?.name ?? 'Error',
    message,
    ...(code === undefined ? {} : { code }),
    ...(constraint === undefined ? {} : { constraint }),
    ...(table === undefined ? {} : { table }),
    ...(frames ? { stack: `${e.constructor?.name ?? 'Error'}: ${message}${frames}` } : {}),
  };
}

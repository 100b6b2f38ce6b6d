/**
 * What of an error may reach a log line (ADR 0338). pino's default `err` serializer copies every
 * enumerable property: a pg error's `detail` (`Key (email)=(jane@x.com) already exists.`) and
 * `where` (the JSON text being parsed), TypeORM's `query`, `parameters` and `driverError`, each
 * able to carry a phone, an email or an SMS text. Only the type, the codes, schema names, the
 * message and the stack's frames are kept, and the message itself is withheld where it quotes
 * input: Postgres's data exceptions and integrity violations (SQLSTATE classes 22 and 23:
 * `invalid input syntax for type uuid: "+336…"`) and JSON.parse's SyntaxError.
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

/** The error's message, unless it can quote the input that caused it. */
export function safeErrorMessage(err: unknown): string {
  const state = sqlStateOf(err);
  if (state !== undefined && (state.startsWith('22') || state.startsWith('23'))) return `database error ${state} (its text can quote the input: not logged)`;
  if (err instanceof SyntaxError) return 'SyntaxError (its text can quote the input: not logged)';
  return err instanceof Error ? err.message : String(err);
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

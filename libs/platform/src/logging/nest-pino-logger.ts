import type { LoggerService } from '@nestjs/common';
import type { Level, Logger } from 'pino';
import { safeErrorMessage } from '@meld/contracts';

/** Nest's log levels on pino's (Nest's `log` is pino's `info`, `verbose` its `trace`). */
type NestLevel = 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
const LEVELS: Record<NestLevel, Level> = { log: 'info', error: 'error', warn: 'warn', debug: 'debug', verbose: 'trace', fatal: 'fatal' };

/**
 * Nest's LoggerService over one pino logger (ADR 0267): what `app.useLogger` needs so that Nest's
 * own lines and every `new Logger(context)` of the apps become pino JSON lines. Nest calls
 * `log(message, ...params)` with the context as the last string parameter; an object message is
 * merged into the line (the access log), a string after it is the line's msg, an Error goes under `err`, and Nest's own
 * `error(message, stack, context)` becomes an `err` carrying that stack.
 */
export class NestPinoLogger implements LoggerService {
  constructor(readonly pino: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('log', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('verbose', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(nestLevel: NestLevel, message: unknown, params: unknown[]): void {
    const level = LEVELS[nestLevel];
    if (!this.pino.isLevelEnabled(level)) return;
    const rest = [...params];
    const context = rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const fields: Record<string, unknown> = context === undefined ? {} : { context };
    if (message instanceof Error) {
      this.pino[level]({ ...fields, err: message }, safeErrorMessage(message));
    } else if (message !== null && typeof message === 'object') {
      // `log.error({ err }, 'unhandled error')`, pino's order: the string is the line's msg. Without
      // one pino would take `err.message` as it stands, around the serializer (ADR 0338).
      const record = message as Record<string, unknown>;
      const msg = typeof rest[0] === 'string' ? rest[0] : record.msg === undefined && record.err instanceof Error ? safeErrorMessage(record.err) : undefined;
      this.pino[level]({ ...record, ...fields }, msg);
    } else if (nestLevel === 'error' && typeof rest[0] === 'string' && rest[0].includes('\n    at ')) {
      // Nest's exception handlers pass (message, stack, context).
      const err = new Error(String(message));
      err.stack = rest[0];
      this.pino.error({ ...fields, err }, String(message));
    } else {
      this.pino[level](fields, String(message), ...rest);
    }
  }
}

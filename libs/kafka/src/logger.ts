import { errorSummary } from '@meld/contracts';
import { logLevel, type LogEntry, type logCreator } from 'kafkajs';

/**
 * The slice of a pino logger the lib uses. Apps pass a pino-shaped adapter of their
 * Nest logger (libs/platform kafkaLoggerOf); tests pass nothing and get silence.
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => undefined;
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

export type KafkaLogLevel = 'nothing' | 'error' | 'warn' | 'info' | 'debug';

export const KAFKAJS_LEVEL: Record<KafkaLogLevel, logLevel> = {
  nothing: logLevel.NOTHING,
  error: logLevel.ERROR,
  warn: logLevel.WARN,
  info: logLevel.INFO,
  debug: logLevel.DEBUG,
};

/**
 * Routes kafkajs's own logs into the app's logger so they are JSON lines like everything
 * else (kafkajs prints its own format to the console otherwise), without the error texts
 * kafkajs copies into them (kafkajsLine).
 */
export function kafkajsLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { obj, msg } = kafkajsLine(namespace, level, log);
      if (level === logLevel.ERROR) logger.error(obj, msg);
      else if (level === logLevel.WARN) logger.warn(obj, msg);
      else if (level === logLevel.INFO) logger.info(obj, msg);
      else logger.debug(obj, msg);
    };
}

/** `: ` then an error's text, as kafkajs appends it (`Crash: DatabaseError: invalid input …`). */
const APPENDED_TEXT = ': ';
const FRAMES = '\n    at ';
/** A socket's failure as Node words it (`connect ECONNREFUSED 10.0.0.5:9092`): its code is kept, an operator's first clue. */
const NETWORK_REASON = /^(?:connect |getaddrinfo |read |write )?(E[A-Z][A-Z0-9_]+)\b/;

/**
 * What of a kafkajs log entry reaches a line (ADR 0338). kafkajs writes the errors it meets into
 * its entries as they are: `Crash: ${e.name}: ${e.message}`, `Failed to send messages: ${e.message}`,
 * an `error` (the Error a handler threw, whose own properties, a pg error's `detail` among them,
 * JSON keeps) or its message, a `cause`, a `stack` whose first line is the message again. The
 * error can be any handler's, a store's quoting the row it refused. So at warn and error, where
 * kafkajs puts them, a message keeps its words before the first `: ` (and a socket error's code,
 * `Connection error: ECONNREFUSED`); an Error anywhere in the
 * entry becomes its errorSummary (class and code); an error's text or cause given as a string is
 * dropped; a stack keeps its frames.
 */
export function kafkajsLine(namespace: string, level: logLevel, log: LogEntry['log']): { obj: Record<string, unknown>; msg: string } {
  const { message, ...extra }: { message: unknown } = log;
  const obj: Record<string, unknown> = { kafkajs: namespace };
  for (const [key, value] of Object.entries(extra)) {
    if (value instanceof Error) obj[key] = errorSummary(value);
    else if (key === 'stack' && typeof value === 'string') {
      if (value.includes(FRAMES)) obj.stack = value.slice(value.indexOf(FRAMES) + 1);
    } else if ((key === 'error' || key === 'cause') && typeof value === 'string') continue;
    else obj[key] = value;
  }
  if (message instanceof Error) return { obj, msg: errorSummary(message) };
  const text = typeof message === 'string' ? message : String(message);
  const cut = text.indexOf(APPENDED_TEXT);
  const quiet = level === logLevel.DEBUG || level === logLevel.INFO;
  if (quiet || cut < 0) return { obj, msg: text };
  const reason = NETWORK_REASON.exec(text.slice(cut + APPENDED_TEXT.length));
  return { obj, msg: reason ? `${text.slice(0, cut)}: ${reason[1]}` : text.slice(0, cut) };
}

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
 * else (kafkajs prints its own format to the console otherwise).
 */
export function kafkajsLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, ...extra } = log;
      const obj = { kafkajs: namespace, ...extra };
      if (level === logLevel.ERROR) logger.error(obj, message);
      else if (level === logLevel.WARN) logger.warn(obj, message);
      else if (level === logLevel.INFO) logger.info(obj, message);
      else logger.debug(obj, message);
    };
}

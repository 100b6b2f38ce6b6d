import { pino } from 'pino';
import { NestPinoLogger } from './nest-pino-logger';

type Line = Record<string, unknown> & { level: number; msg?: string; context?: string; err?: { message: string; stack: string } };

function capture(level = 'info') {
  const lines: Line[] = [];
  const logger = new NestPinoLogger(pino({ level, base: { app: 'spec' } }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) }));
  return { logger, lines };
}

describe('NestPinoLogger: Nest log calls as pino lines', () => {
  it('a message with its context; Nest levels on pino levels', () => {
    const { logger, lines } = capture('trace');
    logger.log('started', 'Boot');
    logger.warn('slow', 'Db');
    logger.verbose('detail', 'X');
    logger.fatal('gone', 'Y');
    expect(lines.map((l) => [l.level, l.msg, l.context, l.app])).toEqual([
      [30, 'started', 'Boot', 'spec'],
      [40, 'slow', 'Db', 'spec'],
      [10, 'detail', 'X', 'spec'],
      [60, 'gone', 'Y', 'spec'],
    ]);
  });

  it('an object message is merged into the line (the access log)', () => {
    const { logger, lines } = capture();
    logger.log({ msg: 'request completed', statusCode: 200 }, 'http');
    expect(lines[0]).toMatchObject({ msg: 'request completed', statusCode: 200, context: 'http' });
  });

  it('an object and a message, pino’s order, as the error filter writes them: the message is the line’s msg', () => {
    const { logger, lines } = capture();
    // What `new Logger('http').error({ err }, 'unhandled error')` hands the service: Nest appends the context.
    logger.error({ err: new Error('boom') }, 'unhandled error', 'http');
    logger.warn({ limit: 'rows' }, 'a ClickHouse read ran into its limit', 'http');
    expect(lines[0]).toMatchObject({ level: 50, msg: 'unhandled error', context: 'http', err: { message: 'boom' } });
    expect(lines[1]).toMatchObject({ level: 40, msg: 'a ClickHouse read ran into its limit', context: 'http', limit: 'rows' });
  });

  it('an Error goes under err; Nest’s (message, stack, context) becomes an err with that stack', () => {
    const { logger, lines } = capture();
    logger.error(new Error('boom'), 'Work');
    const stack = 'Error: nest failed\n    at Handler.run (file.ts:1:1)';
    logger.error('nest failed', stack, 'ExceptionsHandler');
    expect(lines[0]).toMatchObject({ level: 50, msg: 'boom', context: 'Work', err: { message: 'boom' } });
    expect(lines[1]).toMatchObject({ level: 50, msg: 'nest failed', context: 'ExceptionsHandler', err: { message: 'nest failed', stack } });
  });

  it('below the level nothing is built or written; no context is fine', () => {
    const { logger, lines } = capture('warn');
    logger.log('hidden', 'Ctx');
    logger.debug('hidden too');
    logger.warn('shown');
    expect(lines.map((l) => [l.msg, l.context])).toEqual([['shown', undefined]]);
  });
});

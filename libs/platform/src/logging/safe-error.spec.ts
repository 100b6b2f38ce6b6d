import { ClickHouseError } from '@clickhouse/client';
import { DatabaseError } from 'pg-protocol';
import { pino } from 'pino';
import { QueryFailedError } from 'typeorm';
import { loggerOptions } from './logger.module';
import { NestPinoLogger } from './nest-pino-logger';
import { errorSummary, LoggableError, serializeError } from '@meld/contracts';

const PII = ['jane@x.com', '+33612345678', 'your code is 4821'];

/** A pg error as the driver builds it, with the fields that quote input. */
function pgError(message: string, code: string, more: Partial<DatabaseError> = {}): DatabaseError {
  return Object.assign(new DatabaseError(message, 100, 'error'), { code, severity: 'ERROR', ...more });
}

function lines() {
  const out: string[] = [];
  const logger = pino(loggerOptions('spec', 'info'), { write: (s: string) => void out.push(s) });
  return { logger, out };
}

describe('what of an error reaches a log line (ADR 0338)', () => {
  it('a unique violation: the code and the constraint, not the detail that names the value', () => {
    const err = pgError('duplicate key value violates unique constraint "users_email_key"', '23505', { detail: 'Key (email)=(jane@x.com) already exists.', constraint: 'users_email_key', table: 'users' });
    expect(serializeError(err)).toEqual({ type: 'DatabaseError', message: 'database error 23505 (its text can quote the input: not logged)', code: '23505', constraint: 'users_email_key', table: 'users', stack: expect.stringMatching(/^DatabaseError: database error 23505 .*\n {4}at /s) });
  });

  it('TypeORM’s failed query: neither the query, its parameters nor the driver error’s text', () => {
    const driver = pgError('invalid input syntax for type uuid: "+33612345678"', '22P02', { where: 'JSON data, line 1: {"text":"your code is 4821"' });
    const err = new QueryFailedError('INSERT INTO sms_messages … $1', [{ destination: '+33612345678', text: 'your code is 4821', email: 'jane@x.com' }], driver);
    const { logger, out } = lines();
    logger.error({ err }, 'unhandled error');
    for (const secret of PII) expect(out[0]).not.toContain(secret);
    expect(JSON.parse(out[0]!).err).toMatchObject({ type: 'QueryFailedError', code: '22P02', message: expect.stringContaining('22P02') });
  });

  it('a JSON.parse error quotes its input: withheld; other messages are kept', () => {
    let syntax: unknown;
    try {
      JSON.parse('jane@x.com');
    } catch (e) {
      syntax = e;
    }
    expect(JSON.stringify(serializeError(syntax))).not.toContain('jane');
    expect(serializeError(new Error('connect ECONNREFUSED 127.0.0.1:5432'))).toMatchObject({ type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:5432' });
    expect(serializeError('a string')).toEqual({ message: 'a string' });
  });

  it('a ClickHouse server error quotes the row or the query: its code (and type) only', () => {
    // 18.16's text, which @clickhouse/client leaves in a plain Error (libs/kafka's sink-store-errors spec gets it from the server).
    const old = new Error('Code: 27, e.displayText() = DB::Exception: Cannot parse input: expected " before: jane@x.com","note":"your code is 4821"}: (at row 1)\n, e.what() = DB::Exception\n');
    const current = new ClickHouseError({ message: "Syntax error: failed at position 40 ('+33612345678'): ", code: '62', type: 'SYNTAX_ERROR' });
    const { logger, out } = lines();
    logger.error({ err: old }, 'unhandled error');
    logger.error({ err: current }, 'unhandled error');
    for (const secret of PII) expect(out.join('')).not.toContain(secret);
    expect(JSON.parse(out[0]!).err).toMatchObject({ message: 'ClickHouse error 27 (its text can quote the input: not logged)' });
    expect(JSON.parse(out[1]!).err).toMatchObject({ message: 'ClickHouse error 62 SYNTAX_ERROR (its text can quote the input: not logged)', code: '62' });
    // A message that only mentions ClickHouse is kept.
    expect(serializeError(new Error('connect ECONNREFUSED 127.0.0.1:58123'))).toMatchObject({ message: 'connect ECONNREFUSED 127.0.0.1:58123' });
  });

  it('Nest’s logger given an object with `err`, as the error filter logs a 500: the line’s msg is the caller’s, or the safe message', () => {
    const out: string[] = [];
    const nest = new NestPinoLogger(pino(loggerOptions('spec', 'info'), { write: (s: string) => void out.push(s) }));
    // Nest's Logger appends the context: ({ err }, 'unhandled error', 'http').
    nest.error({ err: pgError('invalid input syntax for type uuid: "jane@x.com"', '22P02') }, 'unhandled error', 'http');
    nest.error({ err: new Error('Code: 27, e.displayText() = DB::Exception: Cannot parse input: expected " before: +33612345678"}') }, 'http');
    for (const secret of PII) expect(out.join('')).not.toContain(secret);
    expect(JSON.parse(out[0]!)).toMatchObject({ msg: 'unhandled error', context: 'http', err: { code: '22P02' } });
    expect(JSON.parse(out[1]!)).toMatchObject({ msg: 'ClickHouse error 27 (its text can quote the input: not logged)', context: 'http' });
  });

  it('Nest’s logger puts the same safe message in `msg`', () => {
    const out: string[] = [];
    const nest = new NestPinoLogger(pino(loggerOptions('spec', 'info'), { write: (s: string) => void out.push(s) }));
    nest.error(pgError('invalid input syntax for type uuid: "jane@x.com"', '22P02'), 'Work');
    expect(out[0]).not.toContain('jane@x.com');
    expect(JSON.parse(out[0]!)).toMatchObject({ msg: expect.stringContaining('22P02'), context: 'Work' });
  });

  it('errorSummary, for a line written by hand: the class and the code, never the text; the text of a LoggableError only', () => {
    // A trigger's RAISE built from the row: no class of SQLSTATE says its text is safe.
    expect(errorSummary(pgError('no contact for +33612345678', 'P0001'))).toBe('DatabaseError P0001');
    expect(errorSummary(new QueryFailedError('UPDATE …', ['jane@x.com'], pgError('value "jane@x.com" too long', '22001')))).toBe('QueryFailedError 22001');
    expect(errorSummary(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe('Error ECONNRESET');
    expect(errorSummary(new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { code: 'ECONNREFUSED' }) }))).toBe('TypeError ECONNREFUSED');
    // A code that is not a code is left out rather than quoted.
    expect(errorSummary(Object.assign(new Error('x'), { code: 'jane@x.com is taken' }))).toBe('Error');
    class Refused extends LoggableError {}
    expect(errorSummary(new Refused('SMSC refused the message (command_status 0x45)'))).toBe('Refused: SMSC refused the message (command_status 0x45)');
    expect(errorSummary('+33612345678')).toBe('a thrown string');
    expect(errorSummary(null)).toBe('a thrown null');
  });
});

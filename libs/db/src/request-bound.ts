import { AsyncLocalStorage } from 'node:async_hooks';
import { Client, DatabaseError } from 'pg';

/**
 * A statement sent while serving a request waits at most the app's request bound
 * (`MELD_POSTGRES_REQUEST_TIMEOUT_MS`) for its answer: a Postgres that stalls answers nothing,
 * so only the client can bound the wait. Work outside a request (migrations, backfills, relays,
 * consumers, bulk jobs) has no bound: its statements may legitimately be long (ADR 0360).
 */
const requestPath = new AsyncLocalStorage<true>();

/** Runs `fn` (and the async work it starts) as a request path: its statements get the bound. */
export function onRequestPath<T>(fn: () => T): T {
  return requestPath.run(true, fn);
}

const UNAVAILABLE = Symbol('postgres unavailable');

/** The error of Postgres not answering, refusing or not yet connected, through no fault of the statement. */
export class PostgresUnavailableError extends Error {
  readonly [UNAVAILABLE] = true;
}

/** pg's errors of a connection that failed (refused, lost, silent), not of the statement sent on it. */
const CONNECTION_FAILED = /^(Query read timeout|Connection terminated|Client has encountered a connection error|Client was closed)/;
/** pg-pool's wait for a free connection, TypeORM's query before the DataSource connected. */
const NO_CONNECTION = new Set(['timeout exceeded when trying to connect', 'Driver not Connected']);

/** A statement's error when its connection failed (not a DatabaseError, nor a value pg could not send). */
function markUnavailable(err: unknown): void {
  if (!isError(err) || err instanceof DatabaseError) return;
  const code = (err as { code?: unknown }).code;
  if (CONNECTION_FAILED.test(err.message) || (typeof code === 'string' && /^E[A-Z]+$/.test(code))) (err as unknown as Record<symbol, boolean>)[UNAVAILABLE] = true;
}

/**
 * Every error of a connect, as a PostgresUnavailableError (its cause the original): a socket's
 * error is made outside the app's realm under Jest, where a library's `instanceof Error` (the
 * OAuth server's wrapping of a store failure) does not see it.
 */
function connectFailed(err: unknown): unknown {
  if (!isError(err)) return err;
  const code = (err as { code?: unknown }).code;
  return new PostgresUnavailableError(`could not connect to Postgres (${typeof code === 'string' ? code : err.message})`, { cause: err });
}

/** Not `instanceof Error`: a socket's error is made in another realm under Jest's sandbox. */
function isError(err: unknown): err is Error {
  return typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string';
}

/**
 * Postgres could not serve the statement, through no fault of the statement: a connection
 * refused, lost or timed out, none free in time, the DataSource not yet connected, or a
 * SQLSTATE of class 08 (connection exception), 53 (insufficient resources) or 57 (operator
 * intervention: shutdown, cancel, statement_timeout). TypeORM's QueryFailedError is looked
 * through to its driverError.
 */
export function isPostgresUnavailable(err: unknown): boolean {
  const e = (err as { driverError?: unknown } | null)?.driverError ?? err;
  if (!isError(e)) return false;
  if ((e as unknown as Record<symbol, unknown>)[UNAVAILABLE] === true) return true;
  if (e instanceof DatabaseError) return /^(08|53|57)/.test(e.code ?? '');
  return isError(e) && (NO_CONNECTION.has(e.message) || CONNECTION_FAILED.test(e.message));
}

/**
 * The pg Client of an app's pool (pg-pool's `Client` option): a statement sent on a request path
 * carries `query_timeout: boundMs` (unless it sets its own), and a connection whose statement
 * timed out is closed, so the pool drops it instead of handing it, still waiting, to the next
 * caller (TypeORM releases a connection without the error). A failed connect's or a lost
 * connection's error is marked for isPostgresUnavailable (a socket error carries only its errno).
 */
export function requestBoundClient(boundMs: number): typeof Client {
  return class RequestBoundClient extends Client {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override connect(callback?: any): any {
      if (callback) return super.connect((err: Error, client?: Client) => callback(err && connectFailed(err), client));
      return super.connect().catch((err: unknown) => {
        throw connectFailed(err);
      });
    }

    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override query(config: any, values?: any, callback?: any): any {
      if (config == null || typeof config.submit === 'function') return super.query(config, values, callback);
      const onRequest = requestPath.getStore() === true;
      const text = typeof config === 'string' ? { text: config } : config;
      const sent = onRequest && text.query_timeout === undefined ? { ...text, query_timeout: boundMs } : config;
      const done = typeof values === 'function' ? values : callback;
      if (typeof done === 'function') {
        const marked = (err: Error | null, res: unknown) => (err && markUnavailable(err), done(err, res));
        return typeof values === 'function' ? super.query(sent, marked) : super.query(sent, values, marked);
      }
      return (super.query(sent, values) as Promise<unknown>).catch((err: unknown) => {
        markUnavailable(err);
        // Its answer may still come, or never: the connection is not handed to anyone again.
        if (isError(err) && err.message === 'Query read timeout') this.end().catch(() => undefined);
        throw err;
      });
    }
  };
}

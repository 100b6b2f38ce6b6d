/**
 * The ClickHouse client every app uses: a thin wrapper over @clickhouse/client 1.x with settings
 * that work on ClickHouse 18.16 (the local stack) and current releases.
 *
 * What @clickhouse/client 1.23 sends by default, checked against 18.16 (see README.md):
 *   - no ClickHouse settings at all unless asked; `enable_http_compression=1` only with response
 *     compression (18.16 accepts it, but on loopback it only costs CPU, so compression is off);
 *   - `query_id` and `database` as URL parameters (both fine on 18.16);
 *   - `query_params` become `param_x` settings, which 18.16 rejects ("Unknown setting
 *     param_x"): this wrapper does not expose them; values go through `sql`/`literal`;
 *   - the default result format is JSON; we read JSONEachRow (JSONCompactEachRow and the
 *     *WithNames variants do not exist on 18.16).
 * Keep-alive is on with idle sockets dropped after 2.5 s, below 18.16's default server
 * keep_alive_timeout of 3 s; otherwise a reused socket can be reset mid-request (ECONNRESET).
 * The client's own logger is off: it prints failed queries (with their literals, i.e. user data)
 * to stderr; errors are thrown to the caller instead, who logs them the app's way.
 */
import { createClient, ClickHouseLogLevel, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { escapeIdentifier } from './escape';
import { ident, isSql, sql, sqlText, type Sql } from './sql';

export interface ClickHouseOptions {
  /** `http://host:port`; credentials may be in the URL (`http://user:pass@host:port`). No path. */
  url: string;
  /** Session default database: unqualified table names resolve here. */
  database: string;
  username?: string;
  password?: string;
  /** Sent in the User-Agent, shows in system.query_log. */
  application?: string;
  /** Per request, default 30 s. */
  requestTimeoutMs?: number;
  /** Sockets per client, default 10. */
  maxOpenConnections?: number;
  /** Keep-alive idle socket lifetime, default 2500 ms; keep it under the server's keep_alive_timeout. */
  idleSocketTtlMs?: number;
  /** How long ping()/assertReady() wait, default 2000 ms. */
  pingTimeoutMs?: number;
  /** Settings for every request. Only settings that exist on 18.16 (see README.md). */
  settings?: ClickHouseSettings;
}

export interface QueryOptions {
  settings?: ClickHouseSettings;
  signal?: AbortSignal;
  queryId?: string;
}

/** Thrown by assertReady(): the message says which server, which database and why. */
export class ClickHouseUnavailableError extends Error {
  override readonly name = 'ClickHouseUnavailableError';
}

export interface ClickHouse {
  readonly database: string;
  /** The server URL without credentials, for logs and health output. */
  readonly url: string;
  /** Runs a SELECT and returns its rows (JSONEachRow: UInt64/Int64 arrive as strings). */
  query<T = Record<string, unknown>>(query: Sql | string, options?: QueryOptions): Promise<T[]>;
  /** Runs a statement without a result (DDL, INSERT … SELECT, ALTER). */
  command(query: Sql | string, options?: QueryOptions): Promise<void>;
  /** Inserts rows as JSONEachRow. `table` is a plain name (escaped here) or `ident('db', 't')`. */
  insert<T extends object>(table: string | Sql, rows: readonly T[], options?: QueryOptions): Promise<void>;
  /** `CREATE DATABASE IF NOT EXISTS` for this client's database (through the `default` database). */
  ensureDatabase(): Promise<void>;
  /** true when the server answers `SELECT 1` in this database within pingTimeoutMs; never throws. */
  ping(): Promise<boolean>;
  /** Same check, but throws ClickHouseUnavailableError with the reason (for health indicators). */
  assertReady(): Promise<void>;
  /** `SELECT version()`, e.g. "18.16.1". */
  serverVersion(): Promise<string>;
  close(): Promise<void>;
  /** The underlying @clickhouse/client, for streaming. Never pass `query_params` to it (18.16). */
  readonly raw: ClickHouseClient;
}

/** The numeric server error code of a failed request, on 18.16 and current releases alike. */
export function clickHouseErrorCode(error: unknown): number | undefined {
  // Current servers end messages with "(TABLE_ALREADY_EXISTS)" and the client parses `code`;
  // 18.16 says "Code: 57, e.displayText() = DB::Exception: …" with no type, so the client
  // leaves a plain Error and the code is only in the text.
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^\d+$/.test(code)) return Number(code);
  const match = /\bCode: (\d+)/.exec(messageOf(error) ?? '');
  return match ? Number(match[1]) : undefined;
}

interface Connection {
  url: URL;
  safeUrl: string;
  username: string;
  password: string;
}

function parseUrl(options: ClickHouseOptions): Connection {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new TypeError(`ClickHouse url "${options.url}" is not a URL (expected http://host:port)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`ClickHouse url must be http(s), got ${url.protocol}`);
  // The client would read a path as the database; ours comes from `database` only.
  if (url.pathname !== '/' && url.pathname !== '') throw new TypeError(`ClickHouse url must not have a path (${url.pathname}): pass the database separately`);
  const username = options.username ?? (decodeURIComponent(url.username) || 'default');
  const password = options.password ?? decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  return { url, safeUrl: url.origin, username, password };
}

function makeClient(connection: Connection, options: ClickHouseOptions, database: string): ClickHouseClient {
  return createClient({
    url: connection.url,
    username: connection.username,
    password: connection.password,
    database,
    application: options.application ?? 'meld',
    request_timeout: options.requestTimeoutMs ?? 30_000,
    max_open_connections: options.maxOpenConnections ?? 10,
    compression: { request: false, response: false },
    keep_alive: { enabled: true, idle_socket_ttl: options.idleSocketTtlMs ?? 2_500 },
    clickhouse_settings: options.settings ?? {},
    log: { level: ClickHouseLogLevel.OFF },
  });
}

// Duck-typed rather than `instanceof Error`: errors from Node's own modules (ECONNREFUSED) come
// from another realm under Jest and fail that check.
function messageOf(error: unknown): string | undefined {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : undefined;
}

function reason(error: unknown, timeoutMs: number): string {
  const raw = messageOf(error);
  if (raw === undefined) return String(error);
  const message = raw.replace(/^Error: /, '').trim();
  const { name, code } = error as { name?: unknown; code?: unknown };
  if (name === 'AbortError' || name === 'TimeoutError' || /aborted/i.test(message)) return `no answer within ${timeoutMs} ms`;
  if (code === 'ECONNREFUSED' || /ECONNREFUSED/.test(message)) return `connection refused (${message}); is clickhouse-server running?`;
  return message;
}

export function createClickHouse(options: ClickHouseOptions): ClickHouse {
  if (!options.database) throw new TypeError('ClickHouse database is required');
  const connection = parseUrl(options);
  const client = makeClient(connection, options, options.database);
  const pingTimeoutMs = options.pingTimeoutMs ?? 2_000;
  const database = options.database;

  const assertReady = async (): Promise<void> => {
    try {
      // SELECT rather than /ping: it checks credentials and that the database exists.
      const result = await client.query({ query: 'SELECT 1 AS ok', format: 'JSONEachRow', abort_signal: AbortSignal.timeout(pingTimeoutMs) });
      await result.json();
    } catch (error) {
      throw new ClickHouseUnavailableError(
        `ClickHouse at ${connection.safeUrl} (database "${database}") is not ready: ${reason(error, pingTimeoutMs)}`,
        { cause: error },
      );
    }
  };

  const query = async <T>(text: Sql | string, queryOptions: QueryOptions = {}): Promise<T[]> => {
    const result = await client.query({
      query: sqlText(text),
      format: 'JSONEachRow',
      clickhouse_settings: queryOptions.settings,
      abort_signal: queryOptions.signal,
      query_id: queryOptions.queryId,
    });
    return result.json<T>();
  };

  return {
    database,
    url: connection.safeUrl,
    raw: client,

    query,

    async command(query: Sql | string, queryOptions: QueryOptions = {}): Promise<void> {
      await client.command({
        query: sqlText(query),
        clickhouse_settings: queryOptions.settings,
        abort_signal: queryOptions.signal,
        query_id: queryOptions.queryId,
      });
    },

    async insert<T extends object>(table: string | Sql, rows: readonly T[], queryOptions: QueryOptions = {}): Promise<void> {
      if (rows.length === 0) return; // an empty INSERT is an error on some versions, and pointless
      await client.insert({
        // The client writes `INSERT INTO ${table}` verbatim: escape plain names.
        table: isSql(table) ? table.text : escapeIdentifier(table),
        values: rows as T[],
        format: 'JSONEachRow',
        clickhouse_settings: queryOptions.settings,
        abort_signal: queryOptions.signal,
        query_id: queryOptions.queryId,
      });
    },

    async ensureDatabase(): Promise<void> {
      // Every request names its database, and 18.16 refuses even CREATE DATABASE while the
      // named one is missing ("Database x doesn't exist"): go through `default`.
      const admin = makeClient(connection, options, 'default');
      try {
        await admin.command({ query: sql`CREATE DATABASE IF NOT EXISTS ${ident(database)}`.text });
      } finally {
        await admin.close();
      }
    },

    async ping(): Promise<boolean> {
      try {
        await assertReady();
        return true;
      } catch {
        return false;
      }
    },

    assertReady,

    async serverVersion(): Promise<string> {
      const rows = await query<{ v: string }>('SELECT version() AS v');
      return rows[0].v;
    },

    close: () => client.close(),
  };
}

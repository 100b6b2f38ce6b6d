/**
 * ClickHouse schema migrations: numbered SQL files applied once, in order, recorded in
 * `<database>.schema_migrations`.
 *
 * Files: `NNNN_snake_case_name.sql` (4 or more digits, version = the number). Other files in
 * the folder (README.md) are ignored; a `.sql` file with another name is an error, not skipped.
 * Statements are separated by a `;` at the end of a line (so `;` inside a string literal is fine
 * unless it ends a line); comment-only chunks are dropped. `{database}` is replaced by the
 * backquoted target database everywhere in the file; statements run with that database as the
 * session default too, so unqualified names land there, but write `{database}.table` to be explicit.
 *
 * ClickHouse has no transactional DDL: a migration that fails half-way leaves its first
 * statements applied and is not recorded, so it runs again from the top next time. Write
 * statements that can run twice (`CREATE TABLE IF NOT EXISTS`, `DROP … IF EXISTS`); 18.16 has
 * no `ADD COLUMN IF NOT EXISTS`, so give each ALTER its own migration file.
 *
 * Concurrency: runners serialise on a lock table, `<database>.schema_migrations_lock`, taken by a
 * plain `CREATE TABLE` (the server guards DDL on one name, so exactly one creator wins and the
 * others get "already exists", code 57). A lock older than `staleLockMs` (its creator died) is
 * dropped with a warning. When nothing is pending no lock is taken at all, so the usual boot-time
 * run is a couple of reads.
 */
import { errorSummary } from '@meld/contracts';
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { clickHouseErrorCode, type ClickHouse } from './client';
import { escapeIdentifier } from './escape';
import { ident, sql } from './sql';

/** This lib's own migrations, next to `src/` and `dist/` alike. */
export const DEFAULT_MIGRATIONS_DIR = resolve(__dirname, '..', 'migrations');

const FILE_NAME = /^(\d{4,})_([a-z0-9_]+)\.sql$/;
const TABLE_ALREADY_EXISTS = 57;
const UNKNOWN_TABLE = 60;
const UNKNOWN_DATABASE = 81;

export interface MigrationFile {
  version: number;
  name: string;
  file: string;
  /** sha256 of the file with line endings normalised to \n (a CRLF checkout is not a change). */
  checksum: string;
  /** Statements with `{database}` not yet substituted. */
  statements: string[];
}

export type MigrationLog = (level: 'info' | 'warn', message: string) => void;

export interface MigrateOptions {
  client: ClickHouse;
  /** Target database; defaults to, and must equal, the client's database. */
  database?: string;
  /** Folder of NNNN_name.sql files; defaults to libs/clickhouse/migrations. */
  dir?: string;
  log?: MigrationLog;
  /** How long to wait for another runner's lock, default 60 s. */
  lockTimeoutMs?: number;
  /** A lock this old is considered abandoned and broken, default 10 min. */
  staleLockMs?: number;
}

export interface MigrateResult {
  applied: Array<{ version: number; name: string }>;
  /** Migrations found already applied. */
  upToDate: number;
}

/** An applied migration's file changed: refuse to run anything. */
export class MigrationChecksumError extends Error {
  override readonly name = 'MigrationChecksumError';
}

/** A migration statement failed; `cause` is the server error. */
export class MigrationFailedError extends Error {
  override readonly name = 'MigrationFailedError';
}

/** Splits a migration file on `;` at line ends and drops chunks that are only comments. */
export function splitStatements(text: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/;[ \t]*(?:\n|$)/)
    .map((chunk) => chunk.trim())
    .filter((chunk) => chunk.replace(/\/\*[\s\S]*?\*\//g, '').replace(/--[^\n]*/g, '').trim() !== '');
}

export async function readMigrations(dir: string): Promise<MigrationFile[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    throw new Error(`cannot read ClickHouse migrations folder ${dir}: ${(error as Error).message}`, { cause: error });
  }
  const files: MigrationFile[] = [];
  const byVersion = new Map<number, string>();
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.sql')) continue;
    const match = FILE_NAME.exec(entry.name);
    if (!match) throw new Error(`ClickHouse migration ${entry.name} in ${dir}: name it NNNN_snake_case.sql`);
    const version = Number(match[1]);
    const other = byVersion.get(version);
    if (other) throw new Error(`ClickHouse migrations ${other} and ${entry.name} in ${dir} have the same version ${version}`);
    byVersion.set(version, entry.name);
    const text = (await readFile(join(dir, entry.name), 'utf8')).replace(/\r\n?/g, '\n');
    const statements = splitStatements(text);
    if (statements.length === 0) throw new Error(`ClickHouse migration ${entry.name} in ${dir} has no statements`);
    files.push({ version, name: match[2], file: entry.name, checksum: createHash('sha256').update(text).digest('hex'), statements });
  }
  return files.sort((a, b) => a.version - b.version);
}

interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Migration files of this build not recorded as applied in `database` (all of them when the
 * database or its record table does not exist yet). Reads only: what an app's init container
 * waits on so a new version never queries the old schema (ADR 0171).
 */
export async function pendingClickHouseMigrations(client: ClickHouse, dir: string = DEFAULT_MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const files = await readMigrations(dir);
  let rows: Array<{ version: number | string }>;
  try {
    rows = await client.query(sql`SELECT version FROM ${ident(client.database, 'schema_migrations')}`);
  } catch (err) {
    if (clickHouseErrorCode(err) === UNKNOWN_DATABASE || clickHouseErrorCode(err) === UNKNOWN_TABLE) return files;
    throw err;
  }
  const applied = new Set(rows.map((r) => Number(r.version)));
  return files.filter((f) => !applied.has(f.version));
}

export async function migrateClickHouse(options: MigrateOptions): Promise<MigrateResult> {
  const { client } = options;
  const database = options.database ?? client.database;
  if (database !== client.database) {
    // Statements run with the client's database as session default; a different target would
    // send every unqualified name to the wrong place.
    throw new Error(`migrateClickHouse: database "${database}" differs from the client's database "${client.database}"`);
  }
  const dir = options.dir ?? DEFAULT_MIGRATIONS_DIR;
  const log: MigrationLog = options.log ?? (() => undefined);
  const files = await readMigrations(dir); // validate the folder before touching the server
  const table = ident(database, 'schema_migrations');
  const lockTable = ident(database, 'schema_migrations_lock');

  await client.ensureDatabase();
  await client.command(sql`CREATE TABLE IF NOT EXISTS ${table} (
    version UInt32,
    name String,
    checksum String,
    applied_at DateTime
  ) ENGINE = MergeTree ORDER BY version`);

  /** Applied versions, after checking that none of their files changed. */
  const readApplied = async (): Promise<Map<number, AppliedRow>> => {
    const rows = await client.query<AppliedRow>(sql`SELECT version, name, checksum FROM ${table} ORDER BY version`);
    const applied = new Map<number, AppliedRow>();
    for (const row of rows) applied.set(Number(row.version), row);
    const changed: string[] = [];
    for (const file of files) {
      const row = applied.get(file.version);
      if (!row) continue;
      if (row.checksum !== file.checksum) changed.push(file.file);
      else if (row.name !== file.name) log('warn', `ClickHouse migration ${file.version} was applied as "${row.name}", now named "${file.name}"`);
    }
    if (changed.length > 0) {
      throw new MigrationChecksumError(
        `ClickHouse migrations already applied to "${database}" were edited: ${changed.join(', ')}. ` +
          'Revert the edit and add a new migration instead (or, on a throwaway database, drop it).',
      );
    }
    const onDisk = new Set(files.map((f) => f.version));
    for (const row of applied.values()) {
      if (!onDisk.has(Number(row.version))) log('warn', `ClickHouse migration ${row.version}_${row.name} is applied but its file is gone`);
    }
    return applied;
  };

  const pendingOf = (applied: Map<number, AppliedRow>) => files.filter((f) => !applied.has(f.version));

  if (pendingOf(await readApplied()).length === 0) return { applied: [], upToDate: files.length };

  const owner = `${hostname()} pid ${process.pid} ${randomUUID().slice(0, 8)}`;
  await acquireLock(client, database, lockTable, owner, log, options.lockTimeoutMs ?? 60_000, options.staleLockMs ?? 600_000);
  try {
    const applied = await readApplied(); // another runner may have finished meanwhile
    const pending = pendingOf(applied);
    const latest = Math.max(0, ...[...applied.keys()]);
    const done: MigrateResult['applied'] = [];
    for (const file of pending) {
      if (file.version < latest) log('warn', `ClickHouse migration ${file.file} is older than the latest applied (${latest}); applying it out of order`);
      log('info', `applying ClickHouse migration ${file.file} to ${database}`);
      for (const [index, statement] of file.statements.entries()) {
        const text = statement.replaceAll('{database}', escapeIdentifier(database));
        try {
          await client.command(text);
        } catch (error) {
          const excerpt = text.replace(/\s+/g, ' ').slice(0, 120);
          throw new MigrationFailedError(
            `ClickHouse migration ${file.file}, statement ${index + 1} of ${file.statements.length} (${excerpt}) failed: ${(error as Error).message}`,
            { cause: error },
          );
        }
      }
      await client.command(
        sql`INSERT INTO ${table} (version, name, checksum, applied_at) SELECT ${file.version}, ${file.name}, ${file.checksum}, now()`,
      );
      done.push({ version: file.version, name: file.name });
    }
    return { applied: done, upToDate: files.length - done.length };
  } finally {
    await client.command(sql`DROP TABLE IF EXISTS ${lockTable}`).catch((error: Error) => {
      log('warn', `could not release the ClickHouse migration lock ${lockTable.text}: ${errorSummary(error)}`);
    });
  }
}

async function acquireLock(
  client: ClickHouse,
  database: string,
  lockTable: ReturnType<typeof ident>,
  owner: string,
  log: MigrationLog,
  timeoutMs: number,
  staleMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await client.command(sql`CREATE TABLE ${lockTable} (owner String) ENGINE = TinyLog`);
      await client.command(sql`INSERT INTO ${lockTable} (owner) VALUES (${owner})`);
      return;
    } catch (error) {
      if (clickHouseErrorCode(error) !== TABLE_ALREADY_EXISTS) throw error;
    }
    // Held by someone else: how long (the table's creation time; the owner row may not be written yet).
    const [lock] = await client.query<{ age: number }>(
      sql`SELECT toInt32(toUnixTimestamp(now()) - toUnixTimestamp(metadata_modification_time)) AS age
          FROM system.tables WHERE database = ${database} AND name = 'schema_migrations_lock'`,
    );
    if (!lock) continue; // released in between
    const holder = await client
      .query<{ owner: string }>(sql`SELECT owner FROM ${lockTable}`)
      .then((rows) => rows[0]?.owner ?? 'unknown (no owner row)')
      .catch(() => 'unknown');
    if (lock.age * 1000 >= staleMs) {
      log('warn', `breaking a stale ClickHouse migration lock held for ${lock.age} s by ${holder}`);
      await client.command(sql`DROP TABLE IF EXISTS ${lockTable}`);
      continue;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `ClickHouse migrations on "${database}" are locked by ${holder} for ${lock.age} s. ` +
          `If no migration is running, drop the lock: DROP TABLE ${lockTable.text}`,
      );
    }
    await sleep(250);
  }
}

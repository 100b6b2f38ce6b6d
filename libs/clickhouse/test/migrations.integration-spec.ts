// The migration runner against the real server: each test gets its own database and a temp
// folder of migrations, both removed at the end.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testEnv } from '@meld/testing';
import { createClickHouse, type ClickHouse } from '../src/client';
import { DEFAULT_MIGRATIONS_DIR, MigrationChecksumError, MigrationFailedError, migrateClickHouse, pendingClickHouseMigrations, readMigrations, splitStatements } from '../src/migrations';
import { ident, sql } from '../src/sql';

const env = testEnv();
const prefix = `${env.clickhouseDatabase}_mig_${process.pid}_${Date.now().toString(36)}`;
const clients: ClickHouse[] = [];
const dirs: string[] = [];
let counter = 0;

async function fixture(files: Record<string, string>): Promise<{ ch: ClickHouse; dir: string; database: string; messages: string[]; log: (l: string, m: string) => void }> {
  const database = `${prefix}_${++counter}`;
  const ch = createClickHouse({ url: env.clickhouseUrl, database });
  clients.push(ch);
  const dir = await mkdtemp(join(tmpdir(), 'meld-ch-migrations-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const messages: string[] = [];
  return { ch, dir, database, messages, log: (level, message) => messages.push(`${level}: ${message}`) };
}

async function tables(ch: ClickHouse): Promise<string[]> {
  const rows = await ch.query<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${ch.database} ORDER BY name`);
  return rows.map((r) => r.name);
}

async function recorded(ch: ClickHouse): Promise<Array<{ version: number; name: string }>> {
  return ch.query(sql`SELECT version, name FROM ${ident(ch.database, 'schema_migrations')} ORDER BY version`);
}

const FIRST = `-- two statements, the separator is ; at a line end
CREATE TABLE IF NOT EXISTS {database}.a (id UInt32, note String) ENGINE = MergeTree ORDER BY id;

CREATE TABLE IF NOT EXISTS {database}.b (id UInt32) ENGINE = Memory;
-- trailing comment only
`;
const SECOND = `INSERT INTO {database}.a (id, note) VALUES (1, 'semi; colon mid-line is fine')\n`;

afterAll(async () => {
  for (const ch of clients) {
    await ch.command(sql`DROP DATABASE IF EXISTS ${ident(ch.database)}`).catch(() => undefined);
    await ch.close();
  }
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

it('splits on ; at line ends only and drops comment-only chunks', () => {
  expect(splitStatements("SELECT ';'\n;\r\nSELECT 2; \n-- only a comment\n/* block */\nSELECT 3")).toEqual(["SELECT ';'", 'SELECT 2', '-- only a comment\n/* block */\nSELECT 3']);
  expect(splitStatements('SELECT 1; SELECT 2')).toEqual(['SELECT 1; SELECT 2']); // not at a line end: one statement
});

it('applies a folder in order, records it, and a second run is a no-op', async () => {
  const { ch, dir, database, messages, log } = await fixture({ '0001_create_tables.sql': FIRST, '0002_seed.sql': SECOND, 'README.md': 'ignored' });

  const first = await migrateClickHouse({ client: ch, database, dir, log });
  expect(first).toEqual({ applied: [{ version: 1, name: 'create_tables' }, { version: 2, name: 'seed' }], upToDate: 0 });
  expect(await tables(ch)).toEqual(['a', 'b', 'schema_migrations']); // the lock table is gone
  expect(await recorded(ch)).toEqual([{ version: 1, name: 'create_tables' }, { version: 2, name: 'seed' }]);
  expect(messages).toEqual([`info: applying ClickHouse migration 0001_create_tables.sql to ${database}`, `info: applying ClickHouse migration 0002_seed.sql to ${database}`]);

  const [{ checksum, applied_at }] = await ch.query<{ checksum: string; applied_at: string }>(
    sql`SELECT checksum, applied_at FROM ${ident(database, 'schema_migrations')} WHERE version = 1`,
  );
  expect(checksum).toBe((await readMigrations(dir))[0].checksum);
  expect(applied_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

  const second = await migrateClickHouse({ client: ch, dir, log });
  expect(second).toEqual({ applied: [], upToDate: 2 });
  expect(await ch.query(sql`SELECT count() AS n FROM a`)).toEqual([{ n: '1' }]); // the seed ran once
  expect(await recorded(ch)).toHaveLength(2);
});

it('refuses to run when an applied file changed, and applies a new file later', async () => {
  const { ch, dir, database, log } = await fixture({ '0001_create_tables.sql': FIRST });
  await migrateClickHouse({ client: ch, dir, log });

  await writeFile(join(dir, '0001_create_tables.sql'), FIRST.replace('note String', 'note String, extra UInt8'));
  await writeFile(join(dir, '0002_seed.sql'), SECOND);
  await expect(migrateClickHouse({ client: ch, dir, log })).rejects.toThrow(MigrationChecksumError);
  await expect(migrateClickHouse({ client: ch, dir, log })).rejects.toThrow(/were edited: 0001_create_tables\.sql/);
  expect(await recorded(ch)).toEqual([{ version: 1, name: 'create_tables' }]); // 0002 was not applied either

  // CRLF line endings are not a change.
  await writeFile(join(dir, '0001_create_tables.sql'), FIRST.replace(/\n/g, '\r\n'));
  const later = await migrateClickHouse({ client: ch, database, dir, log });
  expect(later.applied).toEqual([{ version: 2, name: 'seed' }]);
  expect(await ch.query(sql`SELECT note FROM a`)).toEqual([{ note: 'semi; colon mid-line is fine' }]);
});

it('concurrent runners apply each migration exactly once', async () => {
  const { ch, dir, database } = await fixture({
    '0001_create_tables.sql': FIRST,
    '0002_seed.sql': SECOND,
    // Not idempotent on purpose: a second application would fail ("already exists").
    '0003_strict.sql': 'CREATE TABLE {database}.c (id UInt8) ENGINE = Memory\n',
  });
  const others = [1, 2].map(() => createClickHouse({ url: env.clickhouseUrl, database }));
  clients.push(...others);
  const results = await Promise.all([ch, ...others].map((client) => migrateClickHouse({ client, dir })));
  expect(results.flatMap((r) => r.applied.map((a) => a.version)).sort()).toEqual([1, 2, 3]);
  expect(await recorded(ch)).toEqual([
    { version: 1, name: 'create_tables' },
    { version: 2, name: 'seed' },
    { version: 3, name: 'strict' },
  ]);
  expect(await ch.query(sql`SELECT count() AS n FROM a`)).toEqual([{ n: '1' }]);
});

it('a failing statement names the file and statement, is not recorded, and runs again once fixed', async () => {
  const { ch, dir, log } = await fixture({
    '0001_create_tables.sql': FIRST,
    '0002_broken.sql': 'CREATE TABLE IF NOT EXISTS {database}.d (id UInt8) ENGINE = Memory;\nCREATE TABLE {database}.e (id UInt8) ENGINE = NoSuchEngine;\n',
  });
  const failure = migrateClickHouse({ client: ch, dir, log });
  await expect(failure).rejects.toThrow(MigrationFailedError);
  await expect(migrateClickHouse({ client: ch, dir, log })).rejects.toThrow(/0002_broken\.sql, statement 2 of 2 \(CREATE TABLE `[^`]+`\.e .*\) failed: .*NoSuchEngine/);
  expect(await recorded(ch)).toEqual([{ version: 1, name: 'create_tables' }]);
  expect(await tables(ch)).not.toContain('schema_migrations_lock'); // released after a failure

  await writeFile(join(dir, '0002_broken.sql'), 'CREATE TABLE IF NOT EXISTS {database}.d (id UInt8) ENGINE = Memory;\nCREATE TABLE {database}.e (id UInt8) ENGINE = Memory;\n');
  expect((await migrateClickHouse({ client: ch, dir, log })).applied).toEqual([{ version: 2, name: 'broken' }]);
});

it('waits for a held lock, names its holder on timeout, and breaks a stale one', async () => {
  const { ch, dir, database, messages, log } = await fixture({ '0001_create_tables.sql': FIRST });
  await ch.ensureDatabase();
  const lock = ident(database, 'schema_migrations_lock');
  await ch.command(sql`CREATE TABLE ${lock} (owner String) ENGINE = TinyLog`);
  await ch.command(sql`INSERT INTO ${lock} VALUES (${'another host pid 1'})`);

  await expect(migrateClickHouse({ client: ch, dir, log, lockTimeoutMs: 600 })).rejects.toThrow(/locked by another host pid 1 .*DROP TABLE/);
  expect(await recorded(ch)).toEqual([]);

  const result = await migrateClickHouse({ client: ch, dir, log, staleLockMs: 0 });
  expect(result.applied).toEqual([{ version: 1, name: 'create_tables' }]);
  expect(messages.some((m) => /^warn: breaking a stale ClickHouse migration lock .* by another host pid 1/.test(m))).toBe(true);
  expect(await tables(ch)).not.toContain('schema_migrations_lock');
});

it('validates the folder before touching the server', async () => {
  const bad = await fixture({ '1_short.sql': 'SELECT 1\n' });
  await expect(migrateClickHouse({ client: bad.ch, dir: bad.dir })).rejects.toThrow(/1_short\.sql .*NNNN_snake_case\.sql/);
  const duplicate = await fixture({ '0001_a.sql': 'SELECT 1\n', '0001_b.sql': 'SELECT 1\n' });
  await expect(migrateClickHouse({ client: duplicate.ch, dir: duplicate.dir })).rejects.toThrow(/same version 1/);
  const empty = await fixture({ '0001_empty.sql': '-- nothing\n' });
  await expect(migrateClickHouse({ client: empty.ch, dir: empty.dir })).rejects.toThrow(/has no statements/);
  await expect(migrateClickHouse({ client: empty.ch, database: 'elsewhere_test', dir: empty.dir })).rejects.toThrow(/differs from the client's database/);
  expect(await bad.ch.ping()).toBe(false); // no database was created
});

it("the lib's own folder migrates cleanly, then is up to date", async () => {
  const { ch } = await fixture({});
  const files = await readMigrations(DEFAULT_MIGRATIONS_DIR);
  expect((await migrateClickHouse({ client: ch })).applied.map((m) => m.version)).toEqual(files.map((f) => f.version));
  expect(await migrateClickHouse({ client: ch })).toEqual({ applied: [], upToDate: files.length });
  // Every table a migration creates, read from the files themselves.
  const created = new Set<string>();
  for (const f of files) for (const m of (await readFile(join(DEFAULT_MIGRATIONS_DIR, f.file), 'utf8')).matchAll(/CREATE TABLE IF NOT EXISTS \{database\}\.(\w+)/g)) created.add(m[1]);
  expect(created.size).toBeGreaterThan(2);
  expect(await tables(ch)).toEqual([...created, 'schema_migrations'].sort());
});

it('lists pending migrations without creating anything: all before the first run, the new file after an added one, none once applied', async () => {
  const { ch, dir, database } = await fixture({ '0001_create_tables.sql': FIRST });
  expect((await pendingClickHouseMigrations(ch, dir)).map((f) => f.version)).toEqual([1]);
  // Another client: `ch`'s session database does not exist yet (and afterAll drops those of `clients`).
  const other = createClickHouse({ url: env.clickhouseUrl, database: 'system' });
  try {
    expect(await other.query(sql`SELECT name FROM system.databases WHERE name = ${database}`)).toEqual([]); // read only
  } finally {
    await other.close();
  }
  await migrateClickHouse({ client: ch, dir });
  expect(await pendingClickHouseMigrations(ch, dir)).toEqual([]);
  await writeFile(join(dir, '0002_seed.sql'), SECOND);
  expect((await pendingClickHouseMigrations(ch, dir)).map((f) => `${f.version}_${f.name}`)).toEqual(['2_seed']);
});

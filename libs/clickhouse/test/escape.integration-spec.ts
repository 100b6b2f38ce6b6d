// Property tests of the escaper against the real server (18.16 in the local stack): whatever
// goes in through literal()/ident() comes back byte for byte, and nothing else happens.
// Everything lives in a database of its own, dropped at the end.
import fc from 'fast-check';
import { testEnv } from '@meld/testing';
import { createClickHouse, type ClickHouse } from '../src/client';
import { ident, join, sql } from '../src/sql';

const env = testEnv();
const database = `${env.clickhouseDatabase}_escape_${process.pid}_${Date.now().toString(36)}`;
const CANARY = 'canary';
// MELD_FUZZ_RUNS=5000 for a deeper run by hand.
const NUM_RUNS = Number(process.env.MELD_FUZZ_RUNS ?? 300);

// Hand-picked attacks on quoting, comments, multi-statements, formats and parameters.
const corpus = [
  "'", "\\'", "\\\\'", "''", "'''", "\\", "ends with \\", "\\\\", "\\x27", "\\x", "\\x0", "\\0", '\0', "\0'", "'\0",
  "'; DROP TABLE canary; --", "\\'; DROP TABLE canary; --", "' OR 1 = 1 --", "'); DROP DATABASE x; --",
  '\n', '\r\n', '\t', '\r', '\n;\nSELECT 1', '; SELECT 2', "' FORMAT TSV --", '\nFORMAT TSV', 'SETTINGS readonly = 1',
  '/*', '*/', '/* unterminated', '--', '-- comment', '#', '`', '``', '`; DROP TABLE canary; --', '"', '""',
  '{', '}', '{x:String}', '{database}', '$1', '?', '%s', '%', '_',
  '\u2028', '\u2029', '\uFEFF', '\u0085', '\u00A0', '\u200B', 'é', 'e\u0301', '🎉', '👩‍👩‍👧', '\uFFFD', '\uFFFF', '\u{10FFFF}',
  '\x1b[31m', '\x7f', '\x08\x0c\x0b\x07',
];

const injectionString = fc.array(fc.constantFrom(...corpus), { maxLength: 6 }).map((parts) => parts.join(''));
const anyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.string({ unit: 'grapheme', maxLength: 32 }),
  fc.string({ unit: 'binary-ascii', maxLength: 64 }),
  injectionString,
  fc.tuple(fc.string({ unit: 'binary', maxLength: 16 }), injectionString, fc.string({ unit: 'binary', maxLength: 16 })).map((p) => p.join('')),
);

let ch: ClickHouse;

async function canaryIsIntact(): Promise<void> {
  const rows = await ch.query<{ v: string }>(sql`SELECT v FROM ${ident(database, CANARY)}`);
  expect(rows).toEqual([{ v: 'still here' }]);
}

beforeAll(async () => {
  ch = createClickHouse({ url: env.clickhouseUrl, database });
  await ch.ensureDatabase();
  await ch.command(sql`CREATE TABLE ${ident(database, CANARY)} (v String) ENGINE = TinyLog`);
  await ch.command(sql`INSERT INTO ${ident(database, CANARY)} VALUES (${'still here'})`);
});

afterAll(async () => {
  await ch?.command(sql`DROP DATABASE IF EXISTS ${ident(database)}`);
  await ch?.close();
});

describe('strings', () => {
  it('SELECT literal(s) returns exactly s, with the same UTF-8 bytes', async () => {
    await fc.assert(
      fc.asyncProperty(anyString, async (s) => {
        const [row] = await ch.query<{ v: string; n: string; h: string }>(sql`SELECT ${s} AS v, length(v) AS n, hex(v) AS h`);
        expect(row.v).toBe(s);
        expect(Number(row.n)).toBe(Buffer.byteLength(s));
        expect(row.h).toBe(Buffer.from(s).toString('hex').toUpperCase());
      }),
      { numRuns: NUM_RUNS },
    );
    await canaryIsIntact();
  });

  it('every corpus entry on its own, in WHERE, and the canary table untouched', async () => {
    for (const s of corpus) {
      const [row] = await ch.query<{ v: string; hit: string }>(
        sql`SELECT ${s} AS v, (SELECT count() FROM ${ident(database, CANARY)} WHERE v = ${s}) AS hit`,
      );
      expect(row).toEqual({ v: s, hit: '0' });
    }
    const tables = await ch.query<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${database}`);
    expect(tables).toEqual([{ name: CANARY }]);
    await canaryIsIntact();
  });

  it('INSERT … VALUES (parsed by the Values format, not the SQL parser) stores exactly s', async () => {
    const table = ident(database, 'values_roundtrip');
    await ch.command(sql`CREATE TABLE ${table} (id UInt32, v String) ENGINE = Memory`);
    await fc.assert(
      fc.asyncProperty(fc.array(anyString, { minLength: 1, maxLength: 20 }), async (strings) => {
        await ch.command(sql`TRUNCATE TABLE ${table}`);
        const rows = strings.map((s, i) => sql`(${i}, ${s})`);
        await ch.command(sql`INSERT INTO ${table} (id, v) VALUES ${join(rows)}`);
        const back = await ch.query<{ v: string }>(sql`SELECT v FROM ${table} ORDER BY id`);
        expect(back.map((r) => r.v)).toEqual(strings);
      }),
      { numRuns: 100 },
    );
    await canaryIsIntact();
  });

  it('a 200 kB string round-trips (the query stays under max_query_size, 256 KiB by default)', async () => {
    const s = "x'\\\n🎉".repeat(20_000).slice(0, 200_000);
    const [row] = await ch.query<{ n: string }>(sql`SELECT length(${s}) AS n`);
    expect(Number(row.n)).toBe(Buffer.byteLength(s));
  });
});

describe('arrays', () => {
  it('arrays of strings, nested and with NULLs, round-trip', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.array(anyString, { maxLength: 8 }),
          fc.array(fc.array(anyString, { maxLength: 4 }), { minLength: 1, maxLength: 4 }),
          fc.array(fc.option(anyString), { minLength: 1, maxLength: 8 }).filter((a) => a.some((x) => x !== null)),
        ),
        async (value) => {
          const [row] = await ch.query<{ v: unknown }>(sql`SELECT ${value} AS v`);
          expect(row.v).toEqual(value);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  // Mixed signs, widths and floats in one array: ClickHouse needs one supertype (see arrayNumberMode).
  const anyNumber = fc.oneof(
    fc.integer(),
    fc.integer({ min: -10, max: 10 }),
    fc.maxSafeInteger(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.bigInt({ min: -(1n << 63n), max: (1n << 64n) - 1n }).map(Number),
  );

  it('an integer below Int64 next to a 64-bit integer is a float array (found by fast-check)', async () => {
    const value = [[-(2 ** 63) - 2048, 2 ** 32]];
    const [row] = await ch.query<{ v: unknown }>(sql`SELECT ${value} AS v`);
    expect(row.v).toEqual(value);
  });

  it('arrays of any finite numbers round-trip', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.array(anyNumber, { maxLength: 10 }), fc.array(fc.array(anyNumber, { maxLength: 4 }), { minLength: 1, maxLength: 3 })), async (value) => {
        const [row] = await ch.query<{ v: unknown }>(sql`SELECT ${value} AS v`);
        const numbers = (x: unknown): unknown => (Array.isArray(x) ? x.map(numbers) : Number(x)); // 64-bit ints arrive as strings
        expect(numbers(row.v)).toEqual(value);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('arrays of bigints (mixed signs within Int64, or within UInt64) round-trip exactly', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.array(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), { minLength: 1, maxLength: 10 }),
          fc.array(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), { minLength: 1, maxLength: 10 }),
        ),
        async (bigs) => {
          const [row] = await ch.query<{ b: string[] }>(sql`SELECT arrayMap(x -> toString(x), ${bigs}) AS b`);
          expect(row.b.map(BigInt)).toEqual(bigs);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('numbers, bigints, booleans, dates', () => {
  it('finite doubles come back as the same double (including -0 and subnormals)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.double({ noNaN: true, noDefaultInfinity: true }), async (n) => {
        // (U)Int64-typed literals come back as JSON strings; Number() of either is exact here.
        const [row] = await ch.query<{ v: number | string; t: string }>(sql`SELECT ${n} AS v, toTypeName(v) AS t`);
        expect(Object.is(Number(row.v), n) || `${n} came back as ${row.v} (${row.t})`).toBe(true);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('integral numbers are the exact integer, not only the same double (2^63 is not 9223372036854776000)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: -(1n << 63n), max: (1n << 64n) - 1n }).map(Number), async (n) => {
        const [row] = await ch.query<{ s: string; t: string }>(sql`SELECT toString(${n}) AS s, toTypeName(${n}) AS t`);
        if (/Int/.test(row.t)) expect(row.s).toBe(BigInt(n).toString());
        else expect(Number(row.s)).toBe(n);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('bigints across the whole Int64 and UInt64 ranges come back exactly', async () => {
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min: -(1n << 63n), max: (1n << 64n) - 1n }), async (n) => {
        const [row] = await ch.query<{ v: string }>(sql`SELECT toString(${n}) AS v`);
        expect(BigInt(row.v)).toBe(n);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('booleans are 1/0 and null is NULL', async () => {
    const [row] = await ch.query(sql`SELECT ${true} AS t, ${false} AS f, ${null} AS n, isNull(${null}) AS isnull`);
    expect(row).toEqual({ t: 1, f: 0, n: null, isnull: 1 });
  });

  it('dates are the same instant whatever the server timezone, to the second', async () => {
    const table = ident(database, 'dates');
    await ch.command(sql`CREATE TABLE ${table} (d DateTime) ENGINE = Memory`);
    await fc.assert(
      fc.asyncProperty(fc.date({ min: new Date(0), max: new Date('2105-12-31T23:59:59.999Z'), noInvalidDate: true }), async (d) => {
        const seconds = Math.floor(d.getTime() / 1000);
        await ch.command(sql`TRUNCATE TABLE ${table}`);
        await ch.command(sql`INSERT INTO ${table} SELECT ${d}`);
        const [row] = await ch.query<{ t: number; eq: number }>(
          sql`SELECT toUnixTimestamp(${d}) AS t, (SELECT count() FROM ${table} WHERE d = ${d} AND toUnixTimestamp(d) = ${seconds}) AS eq`,
        );
        expect(Number(row.t)).toBe(seconds);
        expect(Number(row.eq)).toBe(1);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('identifiers', () => {
  const name = fc.oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
    fc.constantFrom('`', '``', '\\', '\\`', 'a.b', "'", '"', '\0', 'x`; DROP TABLE canary; --', '{database}', ' ', 'SELECT', '🎉'),
  );

  it('weird table and column names round-trip through CREATE TABLE, INSERT and SELECT', async () => {
    await fc.assert(
      fc.asyncProperty(name, name, anyString, async (tableName, column, value) => {
        fc.pre(tableName !== CANARY);
        const table = ident(database, tableName);
        await ch.command(sql`CREATE TABLE ${table} (${ident(column)} String) ENGINE = Memory`);
        try {
          await ch.command(sql`INSERT INTO ${table} (${ident(column)}) VALUES (${value})`);
          const [row] = await ch.query<Record<string, string>>(sql`SELECT ${ident(column)}, ${ident(column)} AS ${ident(column + '!')} FROM ${table}`);
          expect(row).toEqual({ [column]: value, [column + '!']: value });
          const columns = await ch.query<{ name: string }>(sql`SELECT name FROM system.columns WHERE database = ${database} AND table = ${tableName}`);
          expect(columns).toEqual([{ name: column }]);
        } finally {
          await ch.command(sql`DROP TABLE ${table}`);
        }
      }),
      { numRuns: 60 },
    );
    await canaryIsIntact();
  });

  it('client.insert escapes a plain table name', async () => {
    const tableName = "in`sert' \\ 🎉";
    await ch.command(sql`CREATE TABLE ${ident(database, tableName)} (v String) ENGINE = Memory`);
    await ch.insert(tableName, [{ v: "x'" }, { v: '\0' }]);
    const rows = await ch.query<{ v: string }>(sql`SELECT v FROM ${ident(tableName)} ORDER BY v`);
    expect(rows.map((r) => r.v)).toEqual(['\0', "x'"]);
  });

  it('a database with a weird name works end to end', async () => {
    const weird = `${database} \`'\\ ✓`;
    const other = createClickHouse({ url: env.clickhouseUrl, database: weird });
    try {
      await other.ensureDatabase();
      await other.command(sql`CREATE TABLE ${ident('t')} (v UInt8) ENGINE = Memory`);
      await other.command(sql`INSERT INTO ${ident(weird, 't')} VALUES (${7})`);
      expect(await other.query(sql`SELECT v FROM t`)).toEqual([{ v: 7 }]);
    } finally {
      await other.command(sql`DROP DATABASE IF EXISTS ${ident(weird)}`).catch(() => undefined);
      await other.close();
    }
  });
});

describe('client', () => {
  it('ping and assertReady succeed, and name the problem when the database is missing or the server is down', async () => {
    expect(await ch.ping()).toBe(true);
    await expect(ch.assertReady()).resolves.toBeUndefined();
    expect(await ch.serverVersion()).toMatch(/^\d+\.\d+/);

    const missing = createClickHouse({ url: env.clickhouseUrl, database: `${database}_missing` });
    expect(await missing.ping()).toBe(false);
    await expect(missing.assertReady()).rejects.toThrow(/database "[^"]+_missing"\) is not ready: .*(doesn't|does not) exist/);
    await missing.close();

    const down = createClickHouse({ url: 'http://127.0.0.1:1', database, pingTimeoutMs: 500 });
    await expect(down.assertReady()).rejects.toThrow(/ClickHouse at http:\/\/127\.0\.0\.1:1 .*connection refused/);
    await down.close();
  });

  it('keep-alive sockets survive an idle gap longer than the server keep_alive_timeout', async () => {
    await ch.query('SELECT 1');
    await new Promise((done) => setTimeout(done, 3_500));
    expect(await ch.query('SELECT 2 AS x')).toEqual([{ x: 2 }]);
  });
});

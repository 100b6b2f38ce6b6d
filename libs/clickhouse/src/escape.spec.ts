// The exact text of every literal form. Whether the server reads these back as the same value is
// escape.integration-spec.ts's job; this file pins the forms so a change is deliberate.
import fc from 'fast-check';
import { escapeIdentifier, escapeString, literal } from './escape';
import { ident, isSql, join, raw, sql, Sql, sqlText } from './sql';

describe('escapeString', () => {
  it.each([
    ['', "''"],
    ['plain', "'plain'"],
    ["it's", "'it\\'s'"],
    ['back\\slash', "'back\\\\slash'"],
    ['ends with \\', "'ends with \\\\'"],
    ["\\'", "'\\\\\\''"],
    ["'; DROP TABLE x; --", "'\\'; DROP TABLE x; --'"],
    ['a\nb\tc\rd', "'a\\nb\\tc\\rd'"],
    ['nul\0here', "'nul\\x00here'"],
    ["\0'", "'\\x00\\''"],
    ['\x01\x1f\x7f', "'\\x01\\x1F\\x7F'"],
    ['`{x:String}` /* -- */', "'`{x:String}` /* -- */'"],
    ['é 🎉 \u2028 \uFEFF \u0085', "'é 🎉 \u2028 \uFEFF \u0085'"],
  ])('%j is %s', (input, expected) => {
    expect(escapeString(input)).toBe(expected);
  });

  it('refuses lone surrogates with their position', () => {
    expect(() => escapeString('ok\uD800')).toThrow(/lone UTF-16 surrogate U\+D800 at index 2/);
    expect(() => escapeString('\uDC00x')).toThrow(/U\+DC00 at index 0/);
    expect(() => escapeString('\uDBFF\uDBFF\uDC00')).toThrow(/index 0/);
    expect(escapeString('\uD83C\uDF89')).toBe("'🎉'");
  });

  it('accepts exactly the well-formed strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constantFrom('\uD800', '\uDC00', '\uDBFF', '\uDFFF', "'", '\\'), fc.string({ unit: 'binary', maxLength: 1 })) }), (s) => {
        const wellFormed = !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
        if (wellFormed) expect(escapeString(s)).toMatch(/^'.*'$/s);
        else expect(() => escapeString(s)).toThrow(TypeError);
      }),
    );
  });

  it('never leaves an unescaped quote, backslash or control character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const body = escapeString(s).slice(1, -1);
        // Remove the escape sequences we emit; whatever is left must be free of the specials.
        const rest = body.replace(/\\(x[0-9A-F]{2}|[nrt'\\])/g, '');
        expect(rest).not.toMatch(/['\\\x00-\x1f\x7f]/);
      }),
    );
  });

  it('refuses non-strings', () => {
    expect(() => escapeString(1 as unknown as string)).toThrow(TypeError);
  });
});

describe('escapeIdentifier', () => {
  it.each([
    ['events', '`events`'],
    ['db.table', '`db.table`'],
    ['with`tick', '`with\\`tick`'],
    ["quote'd", "`quote'd`"],
    ['back\\', '`back\\\\`'],
    ['nul\0', '`nul\\x00`'],
    ['new\nline', '`new\\nline`'],
    ['ünï 🎉', '`ünï 🎉`'],
  ])('%j is %s', (input, expected) => {
    expect(escapeIdentifier(input)).toBe(expected);
  });

  it('refuses empty names, lone surrogates and non-strings', () => {
    expect(() => escapeIdentifier('')).toThrow(/empty/);
    expect(() => escapeIdentifier('a\uDFFF')).toThrow(/identifier contains a lone UTF-16 surrogate/);
    expect(() => escapeIdentifier(undefined as unknown as string)).toThrow(TypeError);
  });
});

describe('literal', () => {
  it.each<[unknown, string]>([
    [0, '0'],
    [-0, '(-0.)'],
    [42, '42'],
    [-42, '(-42)'],
    [0.1, '0.1'],
    [-2.5, '(-2.5)'],
    [1e-7, '1e-7'],
    [1e21, '1e+21'],
    [Number.MAX_SAFE_INTEGER, '9007199254740991'],
    [2 ** 63, '9223372036854775808'], // String() would say 9223372036854776000, another UInt64
    [-(2 ** 63), '(-9223372036854775808)'],
    [2 ** 64, '18446744073709551616'],
    [1e20, '100000000000000000000'],
    [Number.MAX_VALUE, '1.7976931348623157e+308'],
    [2.2250738585072014e-308, '2.2250738585072014e-308'],
    [5e-324, '(9.332636185032189e-302 * 5.293955920339377e-23)'],
    [-5e-324, '(-9.332636185032189e-302 * 5.293955920339377e-23)'],
    [0n, '0'],
    [18446744073709551615n, '18446744073709551615'],
    [-9223372036854775808n, '(-9223372036854775808)'],
    [true, '1'],
    [false, '0'],
    [null, 'NULL'],
    ['x', "'x'"],
    [new Date('2026-01-02T03:04:05.999Z'), "toDateTime('2026-01-02 03:04:05', 'UTC')"],
    [new Date(0), "toDateTime('1970-01-01 00:00:00', 'UTC')"],
    [new Date('2105-12-31T23:59:59Z'), "toDateTime('2105-12-31 23:59:59', 'UTC')"],
    [[], '[]'],
    [[1, 'a', null, [true, -1]], "[1, 'a', NULL, [1, (-1)]]"],
    // one array, one supertype: see arrayNumberMode
    [[-1, 4294967295], '[(-1), 4294967295]'],
    [[-1, 4294967296, 5n], '[(-1), toInt64(4294967296), 5]'],
    [[[-1], [4294967296n]], '[[(-1)], [toInt64(4294967296)]]'],
    [[0.5, 1, 4294967296, -5000000000], '[0.5, 1., 4294967296., (-5000000000.)]'],
    [[-1, 2 ** 63], '[(-1.), 9223372036854775808.]'],
    [[0.5, 1, 4294967295], '[0.5, 1, 4294967295]'],
    [[[65536, -1], [-0]], '[[65536., (-1.)], [(-0.)]]'], // inner Int64 with Float64 has no supertype
    [[[255, -1], [0.5]], '[[255, (-1)], [0.5]]'],
    [[-1, 18446744073709551615n], '[(-1), 18446744073709551615]'],
  ])('%p is %s', (value, expected) => {
    expect(literal(value as never)).toBe(expected);
  });

  it('subnormal products are exact', () => {
    fc.assert(
      fc.property(fc.double({ min: -2.2250738585072014e-308, max: 2.2250738585072014e-308, noNaN: true }), (n) => {
        const m = /^\((-?)(\S+) \* (\S+)\)$/.exec(literal(n));
        if (!m) return; // normal or zero: plain form
        const product = Number(m[2]) * Number(m[3]);
        expect(m[1] ? -product : product).toBe(n);
      }),
    );
  });

  it.each<[unknown, RegExp]>([
    [NaN, /NaN cannot be written/],
    [Infinity, /Infinity cannot be written/],
    [-Infinity, /Infinity cannot be written/],
    [1n << 64n, /outside the 64-bit integer range/],
    [-(1n << 63n) - 1n, /outside the 64-bit integer range/],
    [new Date(NaN), /invalid Date/],
    [new Date(-1000), /outside the ClickHouse DateTime range/],
    [new Date('2106-01-01T00:00:00Z'), /outside the ClickHouse DateTime range/],
    [undefined, /use null for NULL/],
    [{}, /an object/],
    [Symbol('x'), /a symbol/],
    [() => 1, /a function/],
    [[1, undefined], /undefined/],
    [[NaN], /NaN/],
  ])('refuses %p', (value, message) => {
    expect(() => literal(value as never)).toThrow(message);
  });

  it('a Sql fragment is not a literal value', () => {
    expect(() => literal(raw('1') as never)).toThrow(TypeError);
  });
});

describe('sql', () => {
  it('passes every interpolation through literal', () => {
    const q = sql`SELECT * FROM t WHERE a = ${"x'y"} AND b IN ${[1, 2]} AND c = ${null} AND d > ${-1}`;
    expect(q).toBeInstanceOf(Sql);
    expect(q.text).toBe("SELECT * FROM t WHERE a = 'x\\'y' AND b IN [1, 2] AND c = NULL AND d > (-1)");
    expect(String(q)).toBe(q.text);
  });

  it('a negative number never turns the preceding minus into a comment', () => {
    expect(sql`SELECT 1 -${-1}`.text).toBe('SELECT 1 -(-1)');
  });

  it('composes fragments, identifiers and trusted text without re-escaping them', () => {
    const where = sql`project = ${'p1'}`;
    const columns = join([ident('a'), ident('we`ird')]);
    const q = sql`SELECT ${columns} FROM ${ident('meld_test', 'events')} WHERE ${where} ${raw('ORDER BY a')} LIMIT ${10}`;
    expect(q.text).toBe("SELECT `a`, `we\\`ird` FROM `meld_test`.`events` WHERE project = 'p1' ORDER BY a LIMIT 10");
  });

  it('join escapes plain values and keeps fragments', () => {
    expect(join([1, 'a', sql`now()`], ' OR ').text).toBe("1 OR 'a' OR now()");
    expect(join([]).text).toBe('');
  });

  it('a plain string that looks like SQL stays a value', () => {
    const injected = "x' OR 1 = 1 --";
    expect(sql`WHERE a = ${injected}`.text).toBe("WHERE a = 'x\\' OR 1 = 1 --'");
  });

  it('only works as a tag', () => {
    expect(() => (sql as unknown as (s: string[]) => Sql)(['SELECT 1'])).toThrow(/tagged template/);
  });

  it('recognises fragments from another copy of the module by their brand', () => {
    const foreign = { text: 'now()', [Symbol.for('@meld/clickhouse.Sql')]: true };
    expect(isSql(foreign)).toBe(true);
    expect(isSql({ text: 'now()' })).toBe(false);
    expect(sql`SELECT ${foreign as unknown as Sql}`.text).toBe('SELECT now()');
  });

  it('ident qualifies and refuses nothing-to-name', () => {
    expect(ident('db', 'a.b').text).toBe('`db`.`a.b`');
    expect(() => ident()).toThrow(TypeError);
  });

  it('sqlText accepts fragments and trusted strings only', () => {
    expect(sqlText('SELECT 1')).toBe('SELECT 1');
    expect(sqlText(sql`SELECT ${1}`)).toBe('SELECT 1');
    expect(() => sqlText({ text: 'x' } as never)).toThrow(TypeError);
  });
});

/**
 * The one literal escaper for ClickHouse SQL.
 *
 * ClickHouse 18.16 (the local stack) has no server-side query parameters (`{x:Type}` fails with
 * "Unknown setting param_x"), so every value that reaches SQL is written into the query text
 * here. Everything in this file is fuzz-tested against a real server (escape.integration-spec.ts);
 * change it only together with those tests.
 *
 * String literals: single quotes with backslash escapes. ClickHouse's lexer ends a quoted token
 * at the first quote that is not preceded by a backslash, and its parser reads `\\`, `\'`, `\n`,
 * `\t`, `\r` and `\xHH` (all of these on 18.16 and current releases), so:
 *   - `\` and `'` are always escaped (never the SQL-standard `''`, so the lexer and the parser
 *     can never disagree about where the literal ends);
 *   - every C0 control character and DEL becomes `\xHH` (NUL included: a raw NUL is legal inside
 *     a ClickHouse literal but would be unreadable in logs and fragile in any tooling between
 *     us and the server); `\n`, `\t`, `\r` use their short forms for readable logs;
 *   - everything else, including non-BMP characters, goes through as UTF-8;
 *   - a lone UTF-16 surrogate has no UTF-8 form: Node would silently send U+FFFD instead, so
 *     the value would not round-trip. We refuse it (TypeError) rather than alter data; callers
 *     that want replacement call `s.toWellFormed()` first.
 */

/** What `literal()` accepts. Arrays may nest. */
export type LiteralValue = string | number | bigint | boolean | Date | null | readonly LiteralValue[];

const HEX = '0123456789ABCDEF';
const SHORT_ESCAPES: Record<number, string> = { 0x09: '\\t', 0x0a: '\\n', 0x0d: '\\r' };

// Bounds that ClickHouse can represent exactly as integer literals (UInt64 / Int64).
const UINT64_MAX = (1n << 64n) - 1n;
const INT64_MIN = -(1n << 63n);

// DateTime is a UInt32 of seconds, but 18.16's date tables stop at 2105-12-31: a later
// 'YYYY-MM-DD hh:mm:ss' literal silently wraps (2106-02-07 06:28:15 UTC reads back as 23295).
const DATETIME_MAX_SECONDS = 4291747199; // 2105-12-31 23:59:59 UTC

// Smallest positive normal double. Below it (subnormals) 18.16's number parser fails with a
// syntax error (strtod reports ERANGE), see numberLiteral.
const MIN_NORMAL = 2.2250738585072014e-308;
const SUBNORMAL_SCALE = 2 ** 74;

/** Lone surrogates cannot be encoded as UTF-8; refuse them with the position. */
function loneSurrogate(what: string, value: string, index: number): never {
  const unit = value.charCodeAt(index).toString(16).toUpperCase();
  throw new TypeError(
    `${what} contains a lone UTF-16 surrogate U+${unit} at index ${index}; it has no UTF-8 form and would not round-trip (use String.prototype.toWellFormed() to replace it)`,
  );
}

/** Escapes the body of a quoted token; `quote` is `'` for strings and `` ` `` for identifiers. */
function escapeBody(value: string, quote: 0x27 | 0x60, what: string): string {
  let out = '';
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    let replacement: string | undefined;
    if (c < 0x20 || c === 0x7f) {
      replacement = SHORT_ESCAPES[c] ?? `\\x${HEX[c >> 4]}${HEX[c & 15]}`;
    } else if (c === 0x5c) {
      replacement = '\\\\';
    } else if (c === quote) {
      replacement = quote === 0x27 ? "\\'" : '\\`';
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const next = value.charCodeAt(i + 1); // NaN past the end
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++; // a valid pair: one astral code point, copied as is
        continue;
      }
      loneSurrogate(what, value, i);
    }
    if (replacement !== undefined) {
      out += value.slice(start, i) + replacement;
      start = i + 1;
    }
  }
  return out + value.slice(start);
}

/** `'...'`: a ClickHouse String literal holding exactly `value`. */
export function escapeString(value: string): string {
  if (typeof value !== 'string') throw new TypeError(`escapeString expects a string, got ${describe(value)}`);
  return `'${escapeBody(value, 0x27, 'string')}'`;
}

/**
 * `` `...` ``: one backquoted identifier (database, table, column, alias) naming exactly `name`.
 * A dot is part of the name, not a separator: use `ident('db', 'table')` for qualified names.
 * Any non-empty well-formed string works on 18.16 (tables are stored under escaped file names),
 * but a long non-ASCII table name can exceed the 255-byte file-name limit: the server says so.
 */
export function escapeIdentifier(name: string): string {
  if (typeof name !== 'string') throw new TypeError(`escapeIdentifier expects a string, got ${describe(name)}`);
  if (name.length === 0) throw new TypeError('an identifier cannot be empty');
  return `\`${escapeBody(name, 0x60, 'identifier')}\``;
}

/**
 * Numbers are written so that ClickHouse reads back the same double, on 18.16 and current:
 *   - JavaScript's shortest round-trip form (`String(n)`, e.g. `0.1`, `1e-7`, `1e+21`) is what
 *     ClickHouse's correctly rounded parser expects, except for integers above 2^53, written
 *     with their exact digits (they may be typed UInt64/Int64, where every digit counts);
 *   - negatives are parenthesised: `a -${-1}` must not become the comment `a --1`;
 *   - -0 is `(-0.)` (a Float64 negative zero; `-0` would be the integer 0);
 *   - subnormals (|n| < 2.2e-308) are a syntax error on 18.16, so they are written as an exact
 *     product of two normal doubles, `(n*2^74 * 2^-74)`, which IEEE multiplication returns exactly;
 *   - NaN and ±Infinity are refused: they are never intended in a filter or a write.
 * Integral values up to 2^64 - 1 come back typed as (U)Int, others as Float64 (ClickHouse's
 * literal typing); UInt64/Int64 columns come back as JSON strings by default.
 */
function numberLiteral(n: number, form: 'plain' | 'float' = 'plain'): string {
  if (!Number.isFinite(n)) throw new RangeError(`${n} cannot be written as a ClickHouse literal (only finite numbers)`);
  if (n === 0) return Object.is(n, -0) ? '(-0.)' : '0';
  const magnitude = Math.abs(n);
  let body: string;
  if (magnitude < MIN_NORMAL) body = `${String(magnitude * SUBNORMAL_SCALE)} * ${String(1 / SUBNORMAL_SCALE)}`;
  // Above 2^53 String() pads the shortest digits with zeros (2^63 prints as 9223372036854776000),
  // which ClickHouse would read as a different UInt64: write the double's exact integer value.
  else if (Number.isInteger(magnitude) && magnitude > Number.MAX_SAFE_INTEGER && magnitude < 1e21) body = BigInt(magnitude).toString();
  else body = String(magnitude);
  if (form === 'float' && /^\d+$/.test(body)) body += '.'; // `5000000000.` is a Float64 literal
  if (n < 0) return `(-${body})`;
  return magnitude < MIN_NORMAL ? `(${body})` : body;
}

/** BigInts are exact 64-bit integers; anything wider would silently become a Float64. */
function bigintLiteral(n: bigint): string {
  if (n > UINT64_MAX || n < INT64_MIN) {
    throw new RangeError(`${n} is outside the 64-bit integer range ClickHouse literals can hold exactly`);
  }
  return n < 0n ? `(${n})` : n.toString();
}

/**
 * Dates become `toDateTime('YYYY-MM-DD hh:mm:ss', 'UTC')`: an explicit zone, so the instant does
 * not depend on the server's timezone; readable in logs. DateTime has whole seconds (no
 * DateTime64 on 18.16), so milliseconds are dropped (rounded down). The range is what 18.16
 * can represent: 1970-01-01 00:00:00 to 2105-12-31 23:59:59 UTC.
 */
function dateLiteral(d: Date): string {
  const ms = d.getTime();
  if (Number.isNaN(ms)) throw new RangeError('an invalid Date cannot be written as a ClickHouse literal');
  const seconds = Math.floor(ms / 1000);
  if (seconds < 0 || seconds > DATETIME_MAX_SECONDS) {
    throw new RangeError(`${d.toISOString()} is outside the ClickHouse DateTime range (1970-01-01 to 2105-12-31 UTC)`);
  }
  const iso = new Date(seconds * 1000).toISOString(); // YYYY-MM-DDThh:mm:ss.000Z
  return `toDateTime('${iso.slice(0, 10)} ${iso.slice(11, 19)}', 'UTC')`;
}

/** A SQL literal for a value: the only way values enter query text. */
export function literal(value: LiteralValue): string {
  return write(value, Array.isArray(value) ? arrayNumberMode(value) : 'plain');
}

/**
 * ClickHouse types each integer literal by its sign and width (UInt8…UInt64, Int8…Int64) and an
 * array needs one supertype (getLeastSupertype): signed with unsigned needs a signed type one bit
 * wider (UInt32 with Int8 is Int64), none exists for UInt64 with any signed type, and a float
 * can only join integers of up to 53 bits. Nested arrays are typed inside out, so
 * `[[65536, -1], [0.5]]` fails even though `[65536, -1, 0.5]` is Float64. So the numbers of one
 * array literal (nested arrays included) are written in a common form when they might need one:
 *   - 'float': some value is a float, next to an integer that is or may become 64-bit wide: all
 *     integral numbers are written as Float64 (`5000000000.`). A number is a double already, so
 *     nothing is lost. Also used for a number of 2^63 or more next to a negative;
 *   - 'int64': no floats, but negatives next to integers of 2^32 or more: those become
 *     `toInt64(n)` (up to 2^63 - 1; beyond that no common type exists and the server says so).
 * BigInts are never turned into floats (that could change them), so such mixes are left to fail.
 */
type NumberMode = 'plain' | 'float' | 'int64';

function arrayNumberMode(value: readonly LiteralValue[]): NumberMode {
  let float = false;
  let negative = false;
  let uint32 = false; // a positive integer typed UInt32 or wider: with a signed one, Int64
  let wide = false; // an integer typed as a 64-bit integer on its own
  let huge = false; // an integral number in [2^63, 2^64): UInt64 only
  const integer = (item: number | bigint): void => {
    if (item < 0) negative = true;
    if (item >= 2 ** 16) uint32 = true;
    if (item >= 2 ** 32 || item < -(2 ** 31)) wide = true;
  };
  const scan = (items: readonly LiteralValue[]): void => {
    for (const item of items) {
      if (Array.isArray(item)) scan(item);
      else if (typeof item === 'bigint') integer(item);
      else if (typeof item === 'number') {
        // Integers beyond the 64-bit ranges are typed Float64 by ClickHouse, like any float.
        if (!Number.isInteger(item) || Object.is(item, -0) || item >= 2 ** 64 || item < -(2 ** 63)) float = true;
        else {
          integer(item);
          if (item >= 2 ** 63) huge = true;
        }
      }
    }
  };
  scan(value);
  if ((float && (wide || (negative && uint32))) || (negative && huge)) return 'float';
  if (negative && wide) return 'int64';
  return 'plain';
}

function write(value: LiteralValue, mode: NumberMode): string {
  switch (typeof value) {
    case 'string':
      return escapeString(value);
    case 'number':
      if (mode === 'float' && Number.isInteger(value)) return numberLiteral(value, 'float');
      if (mode === 'int64' && value >= 2 ** 32 && value < 2 ** 63) return `toInt64(${numberLiteral(value)})`;
      return numberLiteral(value);
    case 'bigint':
      if (mode === 'int64' && value >= 1n << 32n && value < 1n << 63n) return `toInt64(${bigintLiteral(value)})`;
      return bigintLiteral(value);
    case 'boolean':
      return value ? '1' : '0'; // ClickHouse 18.16 has no Bool type: UInt8
    case 'object':
      if (value === null) return 'NULL';
      if (value instanceof Date) return dateLiteral(value);
      if (Array.isArray(value)) return `[${value.map((item) => write(item, mode)).join(', ')}]`;
      break;
  }
  throw new TypeError(
    `${describe(value)} cannot be written as a ClickHouse literal (string, finite number, bigint, boolean, Date, null or an array of these${
      value === undefined ? '; use null for NULL' : ''
    })`,
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an object (${Object.prototype.toString.call(value)})`;
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`;
}

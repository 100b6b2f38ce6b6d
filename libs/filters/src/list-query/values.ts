import type { DateValue, Scalar } from './ast';
import type { FieldType } from './operators';

export const RELATIVE_PERIODS = ['second', 'minute', 'hour', 'day', 'month', 'year'] as const;
export type RelativePeriod = (typeof RELATIVE_PERIODS)[number];

/** Longest string value; longer ones are refused rather than sent to Postgres. */
export const MAX_VALUE_LENGTH = 1000;

/**
 * Largest `<n>` per period: about a thousand years, so `now() - interval` stays inside
 * Postgres' timestamp range (beyond it Postgres raises an error, which would be a 500).
 */
const MAX_AGO: Readonly<Record<RelativePeriod, number>> = { second: 31_000_000_000, minute: 500_000_000, hour: 8_000_000, day: 360_000, month: 12_000, year: 1_000 };

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const RELATIVE = /^\s*(\d{1,11})\s+(second|minute|hour|day|month|year)s?\s+ago\s*$/i;

export const DATE_FORMS = ['ISO 8601 with an offset (2024-05-01T10:00:00+02:00)', 'the microsecond UTC form (2024-05-01T10:00:00.123456)', '<n> <second|minute|hour|day|month|year> ago'];

/** Why a value does not fit, or the value. */
export type Coerced = { ok: true; value: Scalar } | { ok: false; problem: string; allowed?: readonly string[] };

const fail = (problem: string, allowed?: readonly string[]): Coerced => ({ ok: false, problem, ...(allowed ? { allowed } : {}) });
const ok = (value: Scalar): Coerced => ({ ok: true, value });

/**
 * One value of a condition, typed by its field. `raw` is a string from the URL form, or
 * any JSON value from `_q`, where numbers and booleans may also be written as strings so
 * the two forms accept the same things. `ordered`: the operator orders values (`lt`,
 * ranges), which on a `json` field means numbers.
 */
export function coerceScalar(type: FieldType, raw: unknown, ordered: boolean): Coerced {
  if (type === 'number' || (type === 'json' && ordered)) return coerceNumber(raw);
  if (type === 'boolean') return coerceBoolean(raw);
  if (typeof raw === 'number' && type === 'json' && Number.isFinite(raw)) return ok(String(raw));
  if (typeof raw === 'boolean' && type === 'json') return ok(String(raw));
  if (typeof raw !== 'string') return fail(`must be a ${type === 'date' ? 'date string' : 'string'}`);
  const text = checkText(raw);
  if (!text.ok || type !== 'date') return text;
  const date = parseDate(raw);
  return date ? ok(date) : fail(`"${raw}" is not a date`, DATE_FORMS);
}

function checkText(raw: string): Coerced {
  if (raw.length > MAX_VALUE_LENGTH) return fail(`longer than ${MAX_VALUE_LENGTH} characters`);
  // Postgres text cannot hold NUL: it would be a database error, not a mismatch.
  if (raw.includes('\u0000')) return fail('contains a NUL character');
  return ok(raw);
}

function coerceNumber(raw: unknown): Coerced {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && NUMBER.test(raw.trim()) ? Number(raw.trim()) : NaN;
  return Number.isFinite(n) ? ok(n) : fail(`${JSON.stringify(raw) ?? String(raw)} is not a finite number`);
}

function coerceBoolean(raw: unknown): Coerced {
  if (raw === true || raw === 'true') return ok(true);
  if (raw === false || raw === 'false') return ok(false);
  return fail(`${JSON.stringify(raw) ?? String(raw)} is not a boolean`, ['true', 'false']);
}

/** `exists` takes true or false. */
export function coerceFlag(raw: unknown): Coerced {
  return coerceBoolean(raw);
}

/**
 * The three date forms of the spec. Absolute dates keep their instant exactly (Postgres
 * timestamps have microseconds, a JS Date only milliseconds), normalised to six fraction
 * digits and a `+hh:mm` offset; a date without an offset must be the microsecond UTC form.
 */
export function parseDate(text: string): DateValue | null {
  const relative = RELATIVE.exec(text);
  if (relative) {
    const amount = Number(relative[1]);
    const period = relative[2].toLowerCase() as RelativePeriod;
    return amount <= MAX_AGO[period] ? { ago: { amount, period } } : null;
  }
  // An offset sent unencoded (`+02:00` in a query string) arrives as ` 02:00`.
  const m = ISO.exec(text.replace(/ (\d{2}(?::?\d{2})?)$/, '+$1'));
  if (!m) return null;
  const [, y, mo, d, h, mi, s = '00', fraction, offset] = m;
  if (offset === undefined && fraction === undefined) return null;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number);
  const days = month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1];
  if (year < 1 || days === undefined || day < 1 || day > days || hour > 23 || minute > 59 || second > 59) return null;
  const zone = normaliseOffset(offset);
  if (zone === null) return null;
  return { at: `${y}-${mo}-${d}T${h}:${mi}:${s}.${(fraction ?? '').padEnd(6, '0')}${zone}` };
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function normaliseOffset(offset: string | undefined): string | null {
  if (offset === undefined || offset.toUpperCase() === 'Z') return '+00:00';
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2) || '0');
  if (hours > 15 || minutes > 59) return null;
  return `${offset[0]}${digits.slice(0, 2)}:${String(minutes).padStart(2, '0')}`;
}

/** The interval literal of a relative date (`3 day`), bound as a parameter. */
export function intervalOf(ago: { amount: number; period: RelativePeriod }): string {
  return `${ago.amount} ${ago.period}`;
}

/** Masks of emails and phone numbers, alone and inside any text (ADR 0121). */

const STARS = '******';

/** `+33612345678` → `+33******78`: country code and last two digits, a fixed mask so the length leaks nothing. */
export function maskPhone(phone: string): string {
  const s = phone.replace(/\s+/g, '');
  // The plus sign as written (`+`, `＋`, or `%2B` in a URL) and the two digits after it.
  const plus = PLUS_FIRST.exec(s)?.[0].length ?? 0;
  const head = plus ? plus + 2 : 2;
  if (s.length < head + 6) return STARS;
  return `${s.slice(0, head)}${STARS}${s.slice(-2)}`;
}

/** `john@example.com` → `j***@e***.com`: first letters and the top-level domain only (`%40`, a URL's `@`, is kept as written). */
export function maskEmail(email: string): string {
  const [at, sign] = lastAt(email);
  if (at <= 0) return '***';
  const local = email.slice(0, at);
  const domain = email.slice(at + sign.length);
  const dot = domain.lastIndexOf('.');
  const host = dot > 0 ? domain.slice(0, dot) : domain;
  const tld = dot > 0 ? domain.slice(dot) : '';
  return `${local[0]}***${sign}${host ? `${host[0]}***` : '***'}${tld}`;
}

/** Where the last `@` (or `%40`, in any case) of an address is, and how it is written. */
function lastAt(email: string): [number, string] {
  const at = email.lastIndexOf('@');
  const encoded = email.toLowerCase().lastIndexOf('%40');
  return encoded > at ? [encoded, email.slice(encoded, encoded + 3)] : [at, '@'];
}

// An email anywhere in a text (local parts may hold ' & + = ? and more); the characters around it are kept.
// `%40` is an `@` percent-encoded, as a URL's query carries one (`?email=ada%40example.com`). The
// host after a `%40` holds no `%`: else every `%40` of a long run of them (`%40%40…`) would try each
// later one as its host's end, a cubic backtrack (6,000 characters took 47 s). An address starts
// where a run of address characters starts (the leftmost match would start there anyway): tried
// at every character, a long run without an address cost a scan to its end from each (quadratic:
// 0.6 s for one 16 KiB event parameter).
const EMAIL_IN_TEXT = /(?<![^\s@<>()[\]",;:])[^\s@<>()[\]",;:]+(?:@[^\s@<>()[\]",;:]+|%40[^\s@<>()[\]",;:%]+)\.[^\s@<>()[\]",;:]+/gi;
// A phone-like run: optional +, then digits and the usual separators; judged by its digit count below.
// Separators include the no-break spaces French and other locales write numbers with. The run is
// long enough to hold several numbers written one after the other: a shorter bound (22) cut
// `06 12 34 56 78 07 98 76 54 32` inside the second number and left its tail in clear.
// A run does not start or end inside a word of letters and digits (a hash, a code), but an
// underscore joins words as a dash does: `order_0612345678_1` holds a phone as `order-0612345678-1`.
// Digits, plus signs and separators are those the phone parser reads (libphonenumber, which
// `normalisePhone` uses): full-width and Arabic-Indic digits, and the full-width, ideographic and
// dash forms of the separators, so `０９０－１２３４－５６７８` is a phone here as it is there; and
// slashes and square brackets, which split the area code from the number in German
// (`0171/1234567`, `[030] 12345678`).
const DIGITS = '0-9\\uFF10-\\uFF19\\u0660-\\u0669\\u06F0-\\u06F9';
const PLUS = '+\\uFF0B';
// A plus sign, or `%2B`: a `+` percent-encoded, as in a URL's query (`?phone=%2B33612345678`).
const PLUS_SIGN = `(?:[${PLUS}]|%2[Bb])`;
const SEPARATORS = ' ().\\u00a0\\u202f\\u3000\\uFF08\\uFF09\\uFF0E\\u2010-\\u2015\\u2212\\u30FC\\uFF0D/\\uFF0F\\[\\]\\uFF3B\\uFF3D-';
const PHONE_IN_TEXT = new RegExp(`(?<![A-Za-z${DIGITS}${PLUS}])${PLUS_SIGN}?[${DIGITS}][${DIGITS}${SEPARATORS}]{5,254}[${DIGITS}](?![A-Za-z${DIGITS}])`, 'g');
const NOT_DIGIT = new RegExp(`[^${DIGITS}]`, 'g');
const PLUS_FIRST = new RegExp(`^${PLUS_SIGN}`);
const MIN_PHONE_DIGITS = 9;
const MIN_E164_DIGITS = 7;
const MAX_PHONE_DIGITS = 15;

// A UUID is an id, never a phone: one whose first groups are all decimal (`05415024-7345-43e2-…`,
// one UUID in ~280) read as a dashed number and was masked inside event and user ids (ADR 0121).
const UUID_IN_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
// A date, and its time if one follows, is no personal identifier: `2024-05-06 12:30` read as a
// 10-digit run and was masked (ADR 0121). Year first (`2024-05-06`, `2024/05/06`, `2024.05.06`) or
// last (`06/05/2024`, `05/06/2024`, `29.11.2026`), one separator throughout, a year 1900-2099, a
// month and a day that exist; then a time with colons (`T12:30`, ` 12:30:45.123+02:00`, `…Z`).
// Privacy first: a date that goes on with a separator and a digit (`2024-05-06-12-34`), or follows
// one (`1-12-05-2024`), or a plus sign (`+`, `%2B`), could be part of a number and is no date here.
const MONTH = '(?:0?[1-9]|1[0-2])';
const DAY = '(?:0?[1-9]|[12][0-9]|3[01])';
const YEAR = '(?:19|20)[0-9]{2}';
// Separators that join a number's groups tightly (not spaces): a date that goes on with one of them is part of a run.
const JOINERS = '().\\u2010-\\u2015\\u2212\\u30FC\\uFF08\\uFF09\\uFF0E\\uFF0D/\\uFF0F\\[\\]\\uFF3B\\uFF3D-';
const TIME = '(?:[T ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:[.,][0-9]{1,9})?)?(?:Z|[+-](?:[01][0-9]|2[0-3])(?::?[0-5][0-9])?)?)?';
const DATE_IN_TEXT = new RegExp(
  `(?<![${DIGITS}${PLUS}])(?<!%2[Bb])(?<![${DIGITS}][${JOINERS}])` +
    `(?:${YEAR}([-/.])(?:0[1-9]|1[0-2])\\1(?:0[1-9]|[12][0-9]|3[01])|${DAY}([-/.])${MONTH}\\2${YEAR}|${MONTH}([-/.])${DAY}\\3${YEAR})` +
    `${TIME}(?![${DIGITS}])(?![${JOINERS}][${DIGITS}])`,
  'g',
);

/** The [start, end) spans of the UUIDs and dates in a text, which stay whole: in order, none overlapping. */
function keptSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  if (text.length >= 36 && text.includes('-')) for (const m of text.matchAll(UUID_IN_TEXT)) spans.push([m.index, m.index + m[0].length]);
  for (const m of text.matchAll(DATE_IN_TEXT)) spans.push([m.index, m.index + m[0].length]);
  spans.sort((a, b) => a[0] - b[0]);
  return spans.filter(([start], i) => i === 0 || start >= spans[i - 1][1]);
}

/** A text with every email and phone number in it masked (`maskEmail`, `maskPhone`). */
export function maskPiiInText(text: string): string {
  const withoutEmails = text.replace(EMAIL_IN_TEXT, (email) => maskEmail(email));
  let kept: Array<[number, number]> | undefined;
  let next = 0;
  return withoutEmails.replace(PHONE_IN_TEXT, (run: string, at: number) => {
    kept ??= keptSpans(withoutEmails);
    // Runs come in order, as the spans do: those ending before this run are passed for good (linear).
    while (next < kept.length && kept[next][1] <= at) next++;
    const inside: Array<[number, number]> = [];
    for (let i = next; i < kept.length && kept[i][0] < at + run.length; i++) inside.push(kept[i]);
    if (!inside.length) return maskRun(run);
    // The parts of the run outside a UUID or a date are judged alone: a phone beside one is still masked.
    let out = '';
    let pos = 0;
    for (const [start, end] of inside) {
      const from = Math.max(start - at, 0);
      const to = Math.min(end - at, run.length);
      out += maskPart(run.slice(pos, from)) + run.slice(from, to);
      pos = to;
    }
    return out + maskPart(run.slice(pos));
  });
}

const EDGE_SEPARATORS = new RegExp(`^([${SEPARATORS}]*)(.*?)([${SEPARATORS}]*)$`, 's');

/** A piece of a run cut by a UUID: its separators at either end kept, the rest judged as a run. */
function maskPart(part: string): string {
  const [, lead, core, trail] = EDGE_SEPARATORS.exec(part)!;
  return lead + (core ? maskRun(core) : '') + trail;
}

/** A phone-like run masked when its digit count says it is a number (or numbers side by side). */
function maskRun(run: string): string {
  const digits = run.replace(PLUS_FIRST, '').replace(NOT_DIGIT, '').length;
  // With a leading + it is written as a phone (E.164 has numbers of 7 or 8 digits); without one, 8 digits is more often a date.
  if (digits < (PLUS_FIRST.test(run) ? MIN_E164_DIGITS : MIN_PHONE_DIGITS)) return run;
  // More digits than one number holds: with separators it is numbers side by side, masked as one
  // run; without any, one long id (a 19-digit user id), which no phone is (ADR 0121).
  return digits <= MAX_PHONE_DIGITS || digits < run.length ? maskPhone(run) : run;
}

/**
 * A JSON value with `maskPiiInText` applied to every string in it, keys included: a source may key
 * a parameter by an email or a number (`{"ada@example.com": "sent"}`). Two keys that mask alike
 * both stay, the later ones numbered (` (2)`, ` (3)`…), so no value disappears.
 */
export function maskPiiDeep(value: unknown): unknown {
  if (typeof value === 'string') return maskPiiInText(value);
  if (Array.isArray(value)) return value.map(maskPiiDeep);
  if (typeof value === 'object' && value !== null) {
    const out = Object.create(null) as Record<string, unknown>;
    for (const [key, v] of Object.entries(value)) out[freeKey(out, maskPiiInText(key))] = maskPiiDeep(v);
    return out;
  }
  return value;
}

function freeKey(taken: Record<string, unknown>, key: string): string {
  if (!Object.hasOwn(taken, key)) return key;
  for (let n = 2; ; n++) if (!Object.hasOwn(taken, `${key} (${n})`)) return `${key} (${n})`;
}

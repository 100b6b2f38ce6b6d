/** Letters beyond ASCII whose case is varied one by one; past them, the rest vary together (2^6 + 1 spellings at most). */
const MAX_VARIED = 6;

/**
 * The spellings `lower(attributes->>'_email')` can give for a stored email that normalises to
 * `normalised` (`normaliseEmail`: trimmed, lower-cased, NFC). Postgres' `lower()` follows the
 * database's LC_CTYPE: under `C` (the local stack's, and any cluster initialised without a
 * locale) it lowers A-Z only, so `ÉLODIE@x.com` indexes as `Élodie@x.com`…`élodie@x.com` depending
 * on how it was sent. The search compares the index expression with each spelling (`= ANY`, the
 * index still serves it); under a Unicode LC_CTYPE the all-lower spelling, always first, matches.
 */
export function emailSpellings(normalised: string): string[] {
  const chars = [...normalised];
  const cased = chars.flatMap((c, i) => (c > '\u007f' && hasOwnUpper(c) ? [i] : []));
  let spellings = [chars];
  for (const i of cased.slice(0, MAX_VARIED)) spellings = spellings.flatMap((s) => [s, s.map((c, j) => (j === i ? c.toUpperCase() : c))]);
  const rest = cased.slice(MAX_VARIED);
  if (rest.length) spellings.push(chars.map((c, j) => (rest.includes(j) || cased.includes(j) ? c.toUpperCase() : c)));
  return [...new Set(spellings.map((s) => s.join('')))];
}

/** A letter with one upper-case form that lowers back to it (not `ß`, whose upper case is `SS`). */
function hasOwnUpper(c: string): boolean {
  const upper = c.toUpperCase();
  return upper !== c && [...upper].length === 1 && upper.toLowerCase() === c;
}

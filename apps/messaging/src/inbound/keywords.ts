import { normalisePhone } from '@meld/contracts';

/**
 * The carrier-standard opt-out set Twilio honours: always an opt-out, beside the project's own
 * keywords (ADR 0183 amended), as a new project stores `['STOP', 'UNSUBSCRIBE']` (the catalogue
 * default), not null, and a CANCEL or QUIT must not be ignored.
 */
export const DEFAULT_OPT_OUT_KEYWORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'];
/** Opt-in keywords when a project sets none (null). */
export const DEFAULT_OPT_IN_KEYWORDS = ['START', 'YES', 'UNSTOP'];

/**
 * The consent an inbound text states: its whole text equal to one keyword once both are
 * normalised ("stop!" counts, "please stop texting" does not). Opt-out is checked first: a
 * keyword in both lists opts out.
 */
export function keywordConsent(text: string, keywords: { optOut: readonly unknown[] | null; optIn: readonly unknown[] | null }): 'opt-out' | 'opt-in' | null {
  const said = normalise(text);
  if (!said) return null;
  const matches = (list: readonly unknown[]) => list.some((k) => typeof k === 'string' && normalise(k) === said);
  if (DEFAULT_OPT_OUT_KEYWORDS.includes(said) || matches(keywords.optOut ?? [])) return 'opt-out';
  if (matches(keywords.optIn ?? DEFAULT_OPT_IN_KEYWORDS)) return 'opt-in';
  return null;
}

/**
 * What a handset's keyword is compared by (ADR 0183): compatibility forms folded (full-width
 * `ＳＴＯＰ` is STOP), accents and invisible format characters dropped (`Arrêt` matches a
 * project's `ARRET`), punctuation, symbols and emoji at either end ignored (`"Stop?"`, `STOP 🛑`),
 * case ignored. Only the ends: a word inside a sentence is still not a keyword.
 */
const normalise = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/[\p{M}\p{Cf}]/gu, '')
    .replace(/^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu, '')
    .toUpperCase();

/** The handset's number in E.164, from the SMSC's international digits (with or without +); null when it is not a valid number. */
export function inboundNumber(from: string): string | null {
  const digits = from.trim().replace(/^\+/, '');
  return /^[0-9]{6,15}$/.test(digits) ? normalisePhone(`+${digits}`, undefined) : null;
}

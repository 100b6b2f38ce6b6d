/**
 * Inbound SMS keywords (ADR 0183): the sets messaging matches a handset's text against, and the
 * normal form both the matcher and the admin API's duplicate check compare by.
 */

/**
 * The carrier-standard opt-out set Twilio honours: always an opt-out, beside the project's own
 * keywords (ADR 0183 amended), as a new project stores `['STOP', 'UNSUBSCRIBE']` (the catalogue
 * default), not null, and a CANCEL or QUIT must not be ignored.
 */
export const DEFAULT_OPT_OUT_KEYWORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'];
/** Opt-in keywords when a project sets none (null). */
export const DEFAULT_OPT_IN_KEYWORDS = ['START', 'YES', 'UNSTOP'];

/**
 * What a handset's keyword is compared by (ADR 0183): compatibility forms folded (full-width
 * `ＳＴＯＰ` is STOP), accents and invisible format characters dropped (`Arrêt` matches a
 * project's `ARRET`), punctuation, symbols and emoji at either end ignored (`"Stop?"`, `STOP 🛑`),
 * case ignored. Only the ends: a word inside a sentence is still not a keyword.
 */
export const normaliseKeyword = (text: string): string =>
  text
    .normalize('NFKD')
    .replace(/[\p{M}\p{Cf}]/gu, '')
    .replace(/^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu, '')
    .toUpperCase();

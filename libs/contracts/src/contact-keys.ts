import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import type { AttributeType } from './catalogue/reserved-attributes';

/**
 * Normalisation of contact keys (email, phone, other unique values), shared by the app that
 * writes audience contacts (identity-merge builds merge keys with it) and the app that
 * searches them (audience), so a search finds exactly what the merge keyed.
 */

/**
 * Values that must never merge two contacts: placeholders that many unrelated contacts
 * carry (a form default, a serialised object, a sentinel number). Compared after trimming
 * and lower-casing. Projects may pass their own list; this is the default.
 */
export const DEFAULT_JUNK_VALUES: readonly string[] = [
  '',
  'null',
  'undefined',
  'nil',
  'none',
  'anonymous',
  'unknown',
  '0',
  '-1',
  '[object object]',
  'n/a',
  'na',
  'nan',
  '-',
  'noemail',
  'no-email',
];

/**
 * The merge key linking a source contact whose `_user_id` is junk to the `meld-messaging`
 * source contact standing for it (ADR 0362): its value is the ref `<dataSourceId>/<userId>` of
 * the junk-id contact. `@` is in no attribute name, so no merging attribute collides with it.
 */
export const MEMBER_KEY = '@member';

const MEMBER_LINK = /^@member:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/(.+)$/s;

const DEFAULT_JUNK = new Set(DEFAULT_JUNK_VALUES);

/** Whether a `_user_id` is a merge key: not junk by the default list, as identity-merge keys it (ADR 0024). */
export function userIdMerges(userId: string): boolean {
  return !DEFAULT_JUNK.has(userId.trim().toLowerCase());
}

/** The `_user_id` of messaging's source contact standing for a source contact whose `_user_id` is junk (ADR 0362). */
export function memberLink(member: { dataSourceId: string; userId: string }): string {
  return `@member:${member.dataSourceId}/${member.userId}`;
}

/** The ref (`<dataSourceId>/<userId>`) a memberLink names, or null when `userId` is not one. Honoured only for `meld-messaging` contacts. */
export function linkedRef(userId: string): string | null {
  const match = MEMBER_LINK.exec(userId);
  return match ? `${match[1]}/${match[2]}` : null;
}

/** `fr_FR` → `FR`; anything without a country part gives undefined (E.164 input only). */
export function localeCountry(locale: string): CountryCode | undefined {
  const match = /[_-]([A-Za-z]{2})$/.exec(locale.trim());
  return match ? (match[1].toUpperCase() as CountryCode) : undefined;
}

/**
 * Whether phone numbers can belong to the region `code` (ISO 3166-1 alpha-2 as libphonenumber
 * knows it: `GB`, not `UK`). A locale's country is the default of national numbers and a
 * sender's country is matched against the destination number's, so any other code matches
 * no number at all.
 */
export function isPhoneRegion(code: string): boolean {
  return isSupportedCountry(code);
}

/**
 * Email as keyed: trimmed, lower-cased and in Unicode NFC, so `é` sent composed (U+00E9) or
 * decomposed (e + U+0301), as macOS and some forms send it, is one address (ADR 0036).
 */
export function normaliseEmail(raw: string): string {
  return raw.trim().toLowerCase().normalize('NFC');
}

/** Phone as keyed: E.164 with the locale's country as default, or null when it does not parse as a valid number. */
export function normalisePhone(raw: string, country: CountryCode | undefined): string | null {
  const phone = parsePhoneNumberFromString(raw.trim(), country);
  return phone && phone.isValid() ? phone.number : null;
}

/**
 * The normalised merge value of one attribute value, or null when it must not merge
 * (missing, junk, not a scalar, a phone number that does not parse). `_email` and an attribute
 * of type `email` are keyed as emails, `_phone…` and an attribute of type `phone` as phones
 * (ADR 0024); `type` is the attribute's catalogue type.
 */
export function normaliseKeyValue(attribute: string, raw: unknown, country: CountryCode | undefined, junk: ReadonlySet<string>, type?: AttributeType): string | null {
  if (typeof raw !== 'string' && typeof raw !== 'number') return null;
  if (typeof raw === 'number' && !Number.isFinite(raw)) return null;
  const text = String(raw).trim();
  if (junk.has(text.toLowerCase())) return null;
  if (attribute === '_email' || type === 'email') {
    const email = normaliseEmail(text);
    // Not a full validation (ingest does that); only keeps obvious non-addresses from merging.
    return /^[^\s@]+@[^\s@]+$/.test(email) && !junk.has(email.split('@')[0]) ? email : null;
  }
  if (attribute.startsWith('_phone') || type === 'phone') return normalisePhone(text, country);
  return text;
}

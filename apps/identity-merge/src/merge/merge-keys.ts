import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

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

/** A merge key: the attribute it comes from and its normalised value. */
export interface MergeKey {
  attribute: string;
  value: string;
}

export interface KeyOptions {
  /** Merging attributes beyond `_user_id` (the project's configuration). */
  mergingAttributes: readonly string[];
  /** Project locale (`fr_FR`): its country is the default for national phone numbers. */
  locale: string;
  junkValues?: readonly string[];
}

/** `fr_FR` → `FR`; anything without a country part gives undefined (E.164 input only). */
export function localeCountry(locale: string): CountryCode | undefined {
  const match = /[_-]([A-Za-z]{2})$/.exec(locale.trim());
  return match ? (match[1].toUpperCase() as CountryCode) : undefined;
}

/**
 * The normalised merge value of one attribute value, or null when it must not merge
 * (missing, junk, not a scalar, a phone number that does not parse).
 */
export function normaliseKeyValue(attribute: string, raw: unknown, country: CountryCode | undefined, junk: ReadonlySet<string>): string | null {
  if (typeof raw !== 'string' && typeof raw !== 'number') return null;
  if (typeof raw === 'number' && !Number.isFinite(raw)) return null;
  const text = String(raw).trim();
  if (junk.has(text.toLowerCase())) return null;
  if (attribute === '_email') {
    const email = text.toLowerCase();
    // Not a full validation (ingest does that); only keeps obvious non-addresses from merging.
    return /^[^\s@]+@[^\s@]+$/.test(email) && !junk.has(email.split('@')[0]) ? email : null;
  }
  if (attribute === '_phone_mobile' || attribute.startsWith('_phone')) {
    const phone = parsePhoneNumberFromString(text, country);
    return phone && phone.isValid() ? phone.number : null;
  }
  return text;
}

/** Compiled key options, built once per project. */
export class KeyNormaliser {
  private readonly junk: ReadonlySet<string>;
  private readonly country: CountryCode | undefined;
  readonly attributes: readonly string[];

  constructor(options: KeyOptions) {
    this.junk = new Set((options.junkValues ?? DEFAULT_JUNK_VALUES).map((v) => v.trim().toLowerCase()));
    this.country = localeCountry(options.locale);
    this.attributes = ['_user_id', ...options.mergingAttributes.filter((a) => a !== '_user_id')];
  }

  /** Every merge key of a source contact, `_user_id` first, deduplicated. */
  keysOf(userId: string, attributes: Readonly<Record<string, unknown>>): MergeKey[] {
    const out: MergeKey[] = [];
    for (const attribute of this.attributes) {
      const raw = attribute === '_user_id' ? userId : attributes[attribute];
      const value = normaliseKeyValue(attribute, raw, this.country, this.junk);
      if (value !== null) out.push({ attribute, value });
    }
    return out;
  }
}

/** One string per key, for maps: attribute and value joined by a NUL (never in a value we keep). */
export function keyString(key: MergeKey): string {
  return `${key.attribute}\u0000${key.value}`;
}

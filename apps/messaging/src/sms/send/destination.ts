import { localeCountry } from '@meld/contracts';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

export interface Destination {
  /** E.164, as keyed by identity-merge. */
  e164: string;
  /** ISO 3166-1 alpha-2 of the number, which prices and gates the send. */
  country: string;
}

/** A phone as written in the path or on a contact, with the project locale's country as default; null when not a valid number. */
export function destinationOf(raw: string, locale: string): Destination | null {
  const phone = parsePhoneNumberFromString(raw.trim(), localeCountry(locale));
  if (!phone || !phone.isValid() || !phone.country) return null;
  return { e164: phone.number, country: phone.country };
}

/** The first valid mobile of a contact (`_phone_mobile` may hold one value or several). */
export function contactDestination(attributes: Readonly<Record<string, unknown>>, locale: string): Destination | null {
  const value = Object.hasOwn(attributes, '_phone_mobile') ? attributes._phone_mobile : undefined;
  for (const raw of Array.isArray(value) ? value : [value]) {
    const d = typeof raw === 'string' ? destinationOf(raw, locale) : null;
    if (d) return d;
  }
  return null;
}

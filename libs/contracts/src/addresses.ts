import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { localeCountry } from './contact-keys';

/**
 * The messaging channels and what counts as an address on each (system design §4, compliance
 * `basic`): a valid mobile for sms, rcs and whatsapp, an email for email. Declared once: ingest
 * checks the syntax it accepts, the probes sink decides which channels a contact can be reached
 * on, the count filters by them and consent is stated per channel.
 */
export const CHANNELS = ['sms', 'email', 'rcs', 'whatsapp'] as const;
export type Channel = (typeof CHANNELS)[number];
export const PHONE_CHANNELS: readonly Channel[] = ['sms', 'rcs', 'whatsapp'];

/** The email syntax ingest accepts: one `@`, a dotted domain, no spaces. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MOBILE_TYPES = new Set(['MOBILE', 'FIXED_LINE_OR_MOBILE']);

export function isEmail(raw: string): boolean {
  return EMAIL.test(raw.trim());
}

/** A number to send an SMS to: E.164, as identity-merge keys it, and the ISO 3166-1 alpha-2 country that prices and gates the send. */
export interface Destination {
  e164: string;
  country: string;
}

/**
 * A phone as a request writes it (the direct send's target, the suppressions admin API's number)
 * or a contact holds it, with the project locale's country as default; null when not a valid number.
 */
export function destinationOf(raw: string, locale: string): Destination | null {
  const phone = parsePhoneNumberFromString(raw.trim(), localeCountry(locale));
  if (!phone || !phone.isValid() || !phone.country) return null;
  return { e164: phone.number, country: phone.country };
}

/** A valid mobile number (the project locale's country as default); a type the metadata cannot tell counts as mobile. */
export function isMobile(raw: string, locale: string | null): boolean {
  const phone = parsePhoneNumberFromString(raw.trim(), locale ? localeCountry(locale) : undefined);
  if (!phone || !phone.isValid()) return false;
  const type = phone.getType();
  return type === undefined || MOBILE_TYPES.has(type);
}

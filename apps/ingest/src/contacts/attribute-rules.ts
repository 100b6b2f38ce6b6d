import { type AttributeType, isEmail } from '@meld/contracts';
import { unstorableText } from '@meld/api';

/** What ingest needs to know of a catalogue attribute to accept a value for it. */
export interface AttributeRule {
  uid: string;
  type: AttributeType;
  multivalue: boolean;
  enabled: boolean;
  internal: boolean;
  reserved: boolean;
}

export type Scalar = string | number | boolean;
export type AttributeValue = Scalar | Scalar[];

// Syntax only (digits with the usual separators, optional leading +); identity-merge
// normalises to E.164 with the project's locale, so a national number is accepted here.
const PHONE = /^\+?[0-9][0-9 ().-]{4,22}[0-9]$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
export const MAX_STRING_LENGTH = 2048;
/**
 * The longest email address (RFC 5321's path limit), as stored (trimmed). A longer one reached
 * audience_contacts' email index, a btree of at most 2,704 bytes a row: 2,048 CJK characters
 * (6 KB) failed every merge step of the contact, which never reached the audience (ADR 0036).
 */
export const MAX_EMAIL_LENGTH = 254;
export const MAX_VALUES = 100;

function validDate(s: string): boolean {
  if (!DATE.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

export function isIsoDateTime(s: string): boolean {
  return DATETIME.test(s) && !Number.isNaN(Date.parse(s)) && validDate(s.slice(0, 10));
}

/** JSON has no infinity: a number too large for a double (1e400) parses as Infinity, and JSON.stringify writes it as null. */
export const NOT_FINITE = 'must be a finite number (1e400 and the like overflow to infinity)';

/** Why one scalar does not fit a type, or null when it does. */
export function scalarError(type: AttributeType, value: unknown): string | null {
  switch (type) {
    case 'number':
      if (typeof value !== 'number') return 'must be a number';
      return Number.isFinite(value) ? null : NOT_FINITE;
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be a boolean';
    default:
      break;
  }
  if (typeof value !== 'string') return `must be ${type === 'string' ? 'a string' : type === 'email' ? 'an email string' : `a ${type} string`}`;
  if (value.length > MAX_STRING_LENGTH) return `must be at most ${MAX_STRING_LENGTH} characters`;
  switch (type) {
    case 'email':
      if (value.trim().length > MAX_EMAIL_LENGTH) return `must be at most ${MAX_EMAIL_LENGTH} characters (the longest email address)`;
      return isEmail(value) ? null : 'must be an email address';
    case 'phone':
      return PHONE.test(value.trim()) ? null : 'must be a phone number';
    case 'date':
      return validDate(value) ? null : 'must be a date (YYYY-MM-DD)';
    case 'datetime':
      return isIsoDateTime(value) ? null : 'must be an ISO 8601 date-time with an offset';
    default:
      return null;
  }
}

/** Consent attributes (`_consent_sms`, `_consent_email`, …) hold one of these, or null to clear. */
export const CONSENT_VALUES = ['opt-in', 'opt-out'] as const;
const CONSENT_ATTRIBUTE = /^_consent_/;

/** Why a (non-null) value does not fit the attribute, or null when it does. */
export function valueError(rule: AttributeRule, value: unknown): string | null {
  // The compliance filter reads exactly these two statements: anything else would be silently "no consent".
  if (CONSENT_ATTRIBUTE.test(rule.uid) && !CONSENT_VALUES.includes(value as (typeof CONSENT_VALUES)[number])) return "must be 'opt-in', 'opt-out' or null";
  if (!rule.multivalue) return Array.isArray(value) ? 'must be a single value, not a list' : (scalarError(rule.type, value) ?? unstorableValue(value));
  const list = Array.isArray(value) ? value : [value];
  if (list.length > MAX_VALUES) return `must have at most ${MAX_VALUES} values`;
  for (const v of list) {
    const err = scalarError(rule.type, v) ?? unstorableValue(v);
    if (err) return `every value ${err}`;
  }
  return null;
}

/** Contact values live in Postgres jsonb: what it cannot hold is the item's error, not the batch's 500. */
function unstorableValue(value: unknown): string | null {
  return typeof value === 'string' ? unstorableText(value) : null;
}

/**
 * The type a new custom attribute gets from the first value it is sent with (ADR
 * 0035): string, number or boolean from the JSON type; a list makes it multi-valued with
 * the type of its first element. Null (nothing to type) and objects are not typeable.
 */
export function inferRule(uid: string, value: unknown): Pick<AttributeRule, 'type' | 'multivalue'> | string {
  const multivalue = Array.isArray(value);
  const sample = multivalue ? value[0] : value;
  if (multivalue && value.length === 0) return 'cannot create an attribute from an empty list';
  const type = typeof sample === 'string' ? 'string' : typeof sample === 'number' ? 'number' : typeof sample === 'boolean' ? 'boolean' : null;
  if (!type) return `cannot create attribute ${uid} from this value: use a string, number, boolean or a list of them`;
  return { type, multivalue };
}

/**
 * Normalised value stored and published (single-valued lists are refused above; lists keep order).
 * An email is stored trimmed and in Unicode NFC: the check above accepts it around blanks (`isEmail`
 * trims), but the audience's look-ups compare the stored value as it is (search by email,
 * `matches-string`), so ` ada@example.com ` was accepted and then never found, nor was `José`
 * sent with a decomposed accent (e + U+0301) when searched as typed (composed é) (ADR 0036).
 */
export function normaliseValue(rule: AttributeRule, value: AttributeValue): AttributeValue {
  const normalised = rule.type === 'email' ? storedEmail(value) : value;
  if (rule.multivalue && !Array.isArray(normalised)) return [normalised];
  return normalised;
}

/** An email value (or a list of them) as stored and published: trimmed, in Unicode NFC (ADR 0036); contact attributes and declared event parameters alike. */
export function storedEmail(value: AttributeValue): AttributeValue {
  return mapStrings(value, (s) => s.trim().normalize('NFC'));
}

function mapStrings(value: AttributeValue, f: (s: string) => string): AttributeValue {
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? f(v) : v));
  return typeof value === 'string' ? f(value) : value;
}

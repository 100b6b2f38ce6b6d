import { dataModeOf, dataPolicy, maskEmail, maskPhone } from './data-levels';
import type { Principal } from './principal';

/**
 * How a caller sees data derived from contacts beyond their attributes (event parameters,
 * SMS texts, probe top values of PII attributes): the one policy every such read applies
 * (ADR 0121). It follows the contact serializer's rule so no read shows more than the
 * contact itself would:
 * - `clear`: normal mode and a level that reads phone and email (Basic or Full);
 * - `masked`: emails and phone numbers found in string values are masked as contact
 *   attributes are (anonymized mode, or a level that does not read them);
 * - `withheld`: blocked mode (or no audience scope): no contact-derived value at all.
 */
export type ContactDataView = 'clear' | 'masked' | 'withheld';

type Caller = Pick<Principal, 'kind' | 'scopes' | 'project'>;

export function contactDataView(caller: Caller): ContactDataView {
  const policy = dataPolicy(dataModeOf(caller), caller);
  if (!policy.mayReadContactData) return 'withheld';
  return policy.mayReadPii ? 'clear' : 'masked';
}

// An email anywhere in a text (local parts may hold ' & + = ? and more); the characters around it are kept.
const EMAIL_IN_TEXT = /[^\s@<>()[\]",;:]+@[^\s@<>()[\]",;:]+\.[^\s@<>()[\]",;:]+/g;
// A phone-like run: optional +, then digits and the usual separators; judged by its digit count below.
const PHONE_IN_TEXT = /(?<![\w+])\+?\d[\d ().-]{5,22}\d(?!\w)/g;
const MIN_PHONE_DIGITS = 9;
const MAX_PHONE_DIGITS = 15;

/** A text with every email and phone number in it masked (`maskEmail`, `maskPhone`). */
export function maskPiiInText(text: string): string {
  return text.replace(EMAIL_IN_TEXT, (email) => maskEmail(email)).replace(PHONE_IN_TEXT, (run) => {
    const digits = run.replace(/\D/g, '').length;
    return digits >= MIN_PHONE_DIGITS && digits <= MAX_PHONE_DIGITS ? maskPhone(run) : run;
  });
}

/** A JSON value with `maskPiiInText` applied to every string in it (keys are names, not data: kept). */
export function maskPiiDeep(value: unknown): unknown {
  if (typeof value === 'string') return maskPiiInText(value);
  if (Array.isArray(value)) return value.map(maskPiiDeep);
  if (typeof value === 'object' && value !== null) {
    const out = Object.create(null) as Record<string, unknown>;
    for (const [key, v] of Object.entries(value)) out[key] = maskPiiDeep(v);
    return out;
  }
  return value;
}

const unchanged = <T>(value: T): T => value;
const masked = <T>(value: T): T => maskPiiDeep(value) as T;

/**
 * What a read applies to each contact-derived value for this caller, or null when the
 * caller may see none (blocked): the read then refuses (`CONTACT_DATA_BLOCKED`) rather than
 * answer something empty that would read as "nothing happened".
 */
export function contactDataMask(caller: Caller): (<T>(value: T) => T) | null {
  const view = contactDataView(caller);
  if (view === 'withheld') return null;
  return view === 'clear' ? unchanged : masked;
}

export const CONTACT_DATA_BLOCKED = "this project's data mode is blocked: no contact data can be read";

/**
 * The value of an `email` or `phone` attribute shown alone, outside any contact (a probe's top
 * values, ADR 0164), as `view` allows: in clear, masked as a contact read masks it, or
 * `undefined` when withheld.
 */
export function derivedPiiValue(type: 'email' | 'phone', value: string, view: ContactDataView): string | undefined {
  if (view === 'withheld') return undefined;
  if (view === 'clear') return value;
  return type === 'email' ? maskEmail(value) : maskPhone(value);
}

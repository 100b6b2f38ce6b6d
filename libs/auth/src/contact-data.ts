import { dataModeOf, dataPolicy } from './data-levels';
import { maskEmail, maskPhone, maskPiiDeep } from './pii-masks';
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

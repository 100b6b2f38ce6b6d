import { dataLevelOf, dataModeOf, dataPolicy, maskEmail, maskPhone } from './data-levels';
import type { Principal } from './principal';

/**
 * Values derived from contact data without being a contact (a probe's top values, ADR 0164): how
 * an email or phone value may be shown to this caller, by the same rule as a contact read.
 * `clear`: normal mode with the Basic or Full level (dataPolicy.mayReadPii); `masked`: contact
 * data readable but not PII (anonymized mode, or the Default level), masked as a contact read
 * masks it; `withheld`: blocked mode or no audience scope, the values are not returned at all.
 * Other attribute types are aggregates of non-identifying data and are shown as they are.
 */
export type PiiValueAccess = 'clear' | 'masked' | 'withheld';

export function piiValueAccess(caller: Pick<Principal, 'kind' | 'scopes' | 'project'>): PiiValueAccess {
  const mode = dataModeOf(caller);
  if (mode === 'blocked' || dataLevelOf(caller) === 'none') return 'withheld';
  return dataPolicy(mode, caller).mayReadPii ? 'clear' : 'masked';
}

/** The value of an `email` or `phone` attribute as `access` allows (`undefined` when withheld). */
export function derivedPiiValue(type: 'email' | 'phone', value: string, access: PiiValueAccess): string | undefined {
  if (access === 'withheld') return undefined;
  if (access === 'clear') return value;
  return type === 'email' ? maskEmail(value) : maskPhone(value);
}

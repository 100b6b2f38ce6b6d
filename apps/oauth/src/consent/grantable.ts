import type { Scope } from '@meld/contracts';

/** Granted to OAuth clients only where the operator allowed it for the organization (ADR 0144). */
export const SENSITIVE_SCOPES: readonly Scope[] = ['PROJECT_AUDIENCE_DATA_FULL', 'PROJECT_AGGREGATIONS'];

/** What of the requested scopes the user may grant: never wider than their organization allows. */
export function splitScopes(requested: Scope[], sensitiveAllowed: boolean): { granted: Scope[]; withheld: Scope[] } {
  const withheld = sensitiveAllowed ? [] : requested.filter((s) => SENSITIVE_SCOPES.includes(s));
  return { granted: requested.filter((s) => !withheld.includes(s)), withheld };
}

import { PRODUCT_SCOPES } from '@meld/contracts';

const KNOWN_SCOPES = new Set<string>(PRODUCT_SCOPES);

/** The values of a space-delimited `scope` (RFC 6749 §3.3), each once, in order. */
export const scopeList = (text: string): string[] => [...new Set(text.split(' ').filter(Boolean))];

/** Values of a scope list that are not Meld scopes (a Set lookup: the values are client input). */
export const unknownScopes = (scopes: readonly string[]): string[] => scopes.filter((s) => !KNOWN_SCOPES.has(s));

/**
 * The scopes a registered client may ask for (RFC 7591 §2 `scope`), or null when it registered
 * none (then any). Values Meld does not know are left out: rows registered before registration
 * checked them keep working as if they had registered none of those (ADR 0142).
 */
export function registeredScopes(scope: string | null): Set<string> | null {
  if (scope === null) return null;
  const known = scopeList(scope).filter((s) => KNOWN_SCOPES.has(s));
  return known.length ? new Set(known) : null;
}

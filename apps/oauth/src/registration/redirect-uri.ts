import { unstorableText } from '@meld/api';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Why a redirect URI cannot be registered, or null when it can: https anywhere, http only on
 * loopback (native apps, RFC 8252 §7.3); never a fragment (RFC 6749 §3.1.2). Redirect URIs
 * are then compared by exact string, no prefix or wildcard, but for the port of a loopback IP
 * literal (OAuth 2.1 §2.3.1; authorize/redirect-match.ts).
 */
export function redirectUriProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return 'must be a non-empty string';
  const unstorable = unstorableText(value);
  if (unstorable) return unstorable;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.hash || value.includes('#')) return 'must not contain a fragment';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return 'must use https, or http on a loopback host (127.0.0.1, [::1], localhost)';
}

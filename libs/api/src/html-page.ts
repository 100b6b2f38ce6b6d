/*
 * Server-rendered pages outside the JSON API (the OAuth consent screen, the SMS unsubscribe
 * page): escaping and the headers every such page is sent with.
 */
const ENTITIES: ReadonlyMap<string, string> = new Map([
  ['&', '&amp;'],
  ['<', '&lt;'],
  ['>', '&gt;'],
  ['"', '&quot;'],
  ["'", '&#39;'],
]);

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES.get(c)!);

/**
 * No script, nothing but our own stylesheet, never framed (clickjacking of a button), not cached.
 * Forms post only to us; browsers apply form-action to the redirects that follow a form post
 * too, so a page whose form answers with a redirect elsewhere (the OAuth consent back to its
 * client) names that URL's origin (ADR 0148).
 */
export function htmlPageHeaders(redirectsTo?: string): Record<string, string> {
  const formAction = redirectsTo ? `'self' ${new URL(redirectsTo).origin}` : "'self'";
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; style-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
  };
}

export const HTML_PAGE_HEADERS = htmlPageHeaders();

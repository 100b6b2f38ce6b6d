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

/** No script, nothing but our own stylesheet, forms post only to us, never framed (clickjacking of a button), not cached. */
export const HTML_PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
};

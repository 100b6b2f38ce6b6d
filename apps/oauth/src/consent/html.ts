const ENTITIES: ReadonlyMap<string, string> = new Map([
  ['&', '&amp;'],
  ['<', '&lt;'],
  ['>', '&gt;'],
  ['"', '&quot;'],
  ["'", '&#39;'],
]);

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES.get(c)!);

/** A whole page: server-rendered, no script (the CSP forbids any), one stylesheet. */
export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · Meld</title><link rel="stylesheet" href="/oauth/consent.css"></head><body><main>${body}</main></body></html>`;
}

/**
 * frame-ancestors 'none' against clickjacking of the Approve button; nothing but our own
 * stylesheet loads. Browsers apply form-action to the redirects that follow a form post too, so
 * a page whose form answers with the redirect back to the client names that origin (ADR 0148).
 */
export function pageHeaders(redirectUri?: string): Record<string, string> {
  const formAction = redirectUri ? `'self' ${new URL(redirectUri).origin}` : "'self'";
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; style-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
  };
}

import { escapeHtml, htmlPageHeaders } from '@meld/api';

export { escapeHtml };

/** A whole page: server-rendered, no script (the CSP forbids any), one stylesheet. */
export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · Meld</title><link rel="stylesheet" href="/oauth/consent.css"></head><body><main>${body}</main></body></html>`;
}

/** The consent and sign-in pages' headers: their form's redirect goes back to the client (ADR 0148). */
export const pageHeaders = htmlPageHeaders;

import { escapeHtml } from '@meld/api';
import { maskPhone } from '@meld/auth';

const esc = escapeHtml;

export const UNSUBSCRIBE_STYLESHEET = `body{font:16px/1.5 system-ui,sans-serif;background:#f5f5f7;color:#1d1d1f;margin:0}
main{max-width:26rem;margin:12vh auto;background:#fff;border-radius:12px;padding:2rem;box-shadow:0 2px 12px #0001}
h1{font-size:1.35rem;margin:0 0 1rem}p{margin:0 0 1rem}
button{font:inherit;font-weight:600;background:#c62828;color:#fff;border:0;border-radius:8px;padding:.7rem 1.4rem;cursor:pointer}`;

/** Server-rendered, no script (the CSP forbids any); the form works without JavaScript. */
function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${esc(title)}</title><link rel="stylesheet" href="/u/page.css"></head><body><main>${body}</main></body></html>`;
}

/** The confirmation asked for before anything is recorded (a link preview's GET changes nothing). */
export function confirmPage(code: string, senderName: string, destination: string): string {
  const sender = esc(senderName);
  return page(`Stop SMS from ${senderName}`, `<h1>Stop SMS from ${sender}?</h1>
<p>You will no longer receive text messages from <strong>${sender}</strong> at ${esc(maskPhone(destination))}.</p>
<form method="post" action="/u/${esc(code)}"><button type="submit">Unsubscribe</button></form>`);
}

export function donePage(senderName: string): string {
  const sender = esc(senderName);
  return page('Unsubscribed', `<h1>You are unsubscribed</h1><p>${sender} will not send you text messages any more.</p>`);
}

export function messagePage(title: string, text: string): string {
  return page(title, `<h1>${esc(title)}</h1><p>${esc(text)}</p>`);
}

import { randomInt } from 'node:crypto';
import { BadRequestException } from '@nestjs/common';

export type LinkKind = 'short' | 'unsubscribe';

export interface TemplateLink {
  code: string;
  kind: LinkKind;
  /** The target of a short link; null for the unsubscribe link. */
  url: string | null;
}

export interface LinkBases {
  /** Origin short links are served from: the project's shortTrackingDomain or the public API origin. */
  short: string;
  /** Origin of the opt-out link: the project's unsubscribeTrackingDomain or the public API origin. */
  unsubscribe: string;
}

/** Path prefixes of the public link routes (the gateway's link door forwards them; ADR 0182). */
export const SHORT_LINK_PATH = '/l/';
export const UNSUBSCRIBE_PATH = '/u/';

/**
 * Short codes only redirect: 8 base62 characters (~48 bits) keep the text short. The
 * unsubscribe code opts a person out (after a confirming POST), so it is unguessable: 22
 * characters, ~131 bits.
 */
const CODE_LENGTH: Readonly<Record<LinkKind, number>> = { short: 8, unsubscribe: 22 };
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const LINK_CODE = /^[0-9A-Za-z]{8,22}$/;

export function newCode(kind: LinkKind): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH[kind]; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

const PLACEHOLDER = /\{\{\s*(?:short:([^}]*)|(unsubscribe)\s*)\}\}/g;

/**
 * Substitutes `{{short:URL}}` and `{{unsubscribe}}` (product spec, direct SMS rule 1): each
 * short placeholder becomes its own link, every `{{unsubscribe}}` of a text the one opt-out
 * link. Other `{{…}}` stay as written. A short URL must be absolute http(s), else 400 naming
 * `text`. The caller counts encoding and parts on the result.
 */
export function renderTemplate(text: string, bases: LinkBases, codeOf: (kind: LinkKind) => string = newCode): { text: string; links: TemplateLink[] } {
  const links: TemplateLink[] = [];
  let unsubscribe: TemplateLink | undefined;
  const rendered = text.replace(PLACEHOLDER, (_match, url: string | undefined) => {
    if (url === undefined) {
      unsubscribe ??= { code: codeOf('unsubscribe'), kind: 'unsubscribe', url: null };
      return `${bases.unsubscribe}${UNSUBSCRIBE_PATH}${unsubscribe.code}`;
    }
    const link: TemplateLink = { code: codeOf('short'), kind: 'short', url: checkedUrl(url.trim()) };
    links.push(link);
    return `${bases.short}${SHORT_LINK_PATH}${link.code}`;
  });
  if (unsubscribe) links.push(unsubscribe);
  return { text: rendered, links };
}

function checkedUrl(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    const message = 'a {{short:URL}} needs an absolute http or https URL';
    throw new BadRequestException({ message: `text: ${message}`, details: { fields: [{ path: 'text', message }] } });
  }
  return url.href;
}

/** `go.example.com` or `https://go.example.com/` → `https://go.example.com`; null → the fallback origin. */
export function linkOrigin(domain: string | null, fallback: string): string {
  const value = domain?.trim();
  if (!value) return fallback;
  return (/^https?:\/\//i.test(value) ? value : `https://${value}`).replace(/\/+$/, '');
}

import { LOGGABLE_PARAMS, PUBLIC_ROUTES, type PublicRoute } from '@meld/contracts';

type Segment = { literal: string } | { param: string };

const REDACTED = '[redacted]';
/** `/l/{code}` short links and `/u/{code}` unsubscribe pages (ADR 0182): a code opens a person's page, like a password. */
const LINK_PATH = /^\/(l|u)\/([^/]+)\/?$/;
/**
 * A loggable parameter's value is shown only when it looks like an identifier Meld issues (a
 * uuid, a uid): a user id sent where an audience id belongs (an email, a phone) is not.
 */
const ISSUED_ID = /^(?=.*[A-Za-z])(?![0-9+]{6})[A-Za-z0-9_-]{1,128}$/;
/**
 * Outside the route table, a segment with an `@`, an escape (`%40`, `%2B`) or six digits, in a
 * row or apart (`+44-7400-123-498`, a number as the suppressions admin API reads it), may be an
 * email or a phone.
 */
const LOOKS_LIKE_DATA = /[@%]|[0-9](?:[^0-9A-Za-z]*[0-9]){5}/;
/** A query key is shown only when it looks like a field name, not like data sent as a bare key. */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_.[\]-]{0,63}$/;

function compile(routes: readonly PublicRoute[]) {
  const bySize = new Map<number, Segment[][]>();
  const literals = new Set<string>();
  for (const route of routes) {
    const segments: Segment[] = route.path.split('/').map((s) => (s.startsWith(':') ? { param: s.slice(1) } : { literal: s }));
    for (const s of segments) if ('literal' in s) literals.add(s.literal);
    const same = bySize.get(segments.length) ?? [];
    same.push(segments);
    bySize.set(segments.length, same);
  }
  return { bySize, literals };
}

/**
 * The URL as access logs may show it (ADR 0104): path parameters of the public route table
 * that can hold customer data become `:name`, every query value becomes `[redacted]` (list
 * filters carry emails), and on an unknown `/v1` path every segment the route table does not
 * spell out is redacted, since a mistyped route carries the same data. Link codes are masked,
 * loggable parameters only shown when they look issued, and other paths lose the segments that
 * look like an email or a phone (ADR 0338).
 */
export function urlRedactor(routes: readonly PublicRoute[] = PUBLIC_ROUTES): (url: string) => string {
  const { bySize, literals } = compile(routes);
  return (url) => {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : `?${redactQuery(url.slice(q + 1))}`;
    const link = LINK_PATH.exec(path);
    if (link && link[2] !== 'page.css') return `/${link[1]}/:code${query}`;
    const parts = path.split('/');
    // A mistyped /v1 route (`/V1/…`, `//v1/…`) carries the same data as the route.
    if (!path.startsWith('/v1/')) {
      const v1ish = /^\/+v1\//i.test(path);
      return parts.map((p) => (literals.has(p) || (!v1ish && !LOOKS_LIKE_DATA.test(p)) ? p : REDACTED)).join('/') + query;
    }
    const route = bySize.get(parts.length)?.find((segments) => segments.every((s, i) => !('literal' in s) || s.literal === parts[i]));
    const shown = route
      ? parts.map((p, i) => {
          const s = route[i];
          return 'param' in s && !(LOGGABLE_PARAMS.has(s.param) && ISSUED_ID.test(p)) ? `:${s.param}` : p;
        })
      : parts.map((p) => (literals.has(p) ? p : REDACTED));
    return shown.join('/') + query;
  };
}

function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const key = eq < 0 ? '' : pair.slice(0, eq);
      return PLAIN_KEY.test(key) ? `${key}=${REDACTED}` : REDACTED;
    })
    .join('&');
}

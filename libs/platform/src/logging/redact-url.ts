import { LOGGABLE_PARAMS, PUBLIC_ROUTES, type PublicRoute } from '@meld/contracts';

type Segment = { literal: string } | { param: string };

const REDACTED = '[redacted]';
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
 * spell out is redacted, since a mistyped route carries the same data.
 */
export function urlRedactor(routes: readonly PublicRoute[] = PUBLIC_ROUTES): (url: string) => string {
  const { bySize, literals } = compile(routes);
  return (url) => {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : `?${redactQuery(url.slice(q + 1))}`;
    if (!path.startsWith('/v1/')) return path + query;
    const parts = path.split('/');
    const route = bySize.get(parts.length)?.find((segments) => segments.every((s, i) => !('literal' in s) || s.literal === parts[i]));
    const shown = route
      ? parts.map((p, i) => {
          const s = route[i];
          return 'param' in s && !LOGGABLE_PARAMS.has(s.param) ? `:${s.param}` : p;
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

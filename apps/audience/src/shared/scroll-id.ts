import { createHash } from 'node:crypto';
import { BadRequestException } from '@nestjs/common';

/**
 * A scroll id is the state after a page (where the next starts, the window width it ended with)
 * plus a digest of the project and the request's filter (ADRs 0330, 0332): nothing is kept on
 * the server, a scroll never expires, and an id sent with another filter or project is refused
 * rather than silently listing from the middle of something else. Opaque to clients (base64url
 * of JSON); never trusted: each listing checks the state it reads back.
 */
export function filterDigest(...parts: unknown[]): string {
  return createHash('sha256').update(canonical(parts)).digest('base64url').slice(0, 22);
}

/** JSON with object keys sorted: the same filter re-serialised by a client keeps its digest. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function encodeScrollId(digest: string, state: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify({ ...state, v: 1, f: digest })).toString('base64url');
}

/** The state of a scroll id issued for `digest`; `parse` checks its fields (null: not one of ours). */
export function decodeScrollId<T>(scrollId: string, digest: string, parse: (state: Record<string, unknown>) => T | null): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(scrollId, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  const state = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  const value = state && state.v === 1 && typeof state.f === 'string' ? parse(state) : null;
  if (value === null) throw scrollIdError('not a scroll id this endpoint issued');
  if (state!.f !== digest) throw scrollIdError('it was issued for another project or filter: send the same filter as for the first page');
  return value;
}

/** A decimal string of an unsigned 64-bit integer. */
export const isUInt64 = (x: unknown): x is string => typeof x === 'string' && /^\d{1,20}$/.test(x) && BigInt(x) < 2n ** 64n;
/** A hash window's width: up to the whole hash space, 2^64 (page-windows.ts clamps it so). */
export const isWindowWidth = (x: unknown): x is string => typeof x === 'string' && /^\d{1,20}$/.test(x) && BigInt(x) <= 2n ** 64n;
export const isUuidText = (x: unknown): x is string => typeof x === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(x);

function scrollIdError(why: string): BadRequestException {
  return new BadRequestException({ message: `invalid body: scrollId: ${why}`, details: { fields: [{ path: 'scrollId', message: why }] } });
}

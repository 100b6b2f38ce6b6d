import { createHash } from 'node:crypto';
import { AUDIENCE_FILTER_VERSION, type PagePosition } from '@meld/filters';
import { BadRequestException } from '@nestjs/common';

/** A scroll's state between pages: the last contact listed (in the snapshot's order) and the hash window width its page ended with. */
export interface ScrollState {
  position: PagePosition;
  span: bigint;
}

/**
 * A scroll id is the position after the last contact of a page plus a digest of the project and
 * the filter it was issued for (ADR 0330): nothing is kept on the server, a scroll never expires,
 * and an id sent with another filter or project is refused rather than silently listing from the
 * middle of something else. Opaque to clients (base64url of JSON); never trusted: checked on read.
 */
export function filterDigest(projectId: string, version: unknown, root: unknown): string {
  return createHash('sha256').update(canonical([projectId, version ?? AUDIENCE_FILTER_VERSION, root ?? null])).digest('base64url').slice(0, 22);
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

export function encodeScrollId(digest: string, { position, span }: ScrollState): string {
  return Buffer.from(JSON.stringify({ v: 1, f: digest, h: position.hash, i: position.id, s: span.toString() })).toString('base64url');
}

/** The state a scroll id carries; its span is only a hint, clamped where it is used (windowedAudiencePage). */
export function decodeScrollId(scrollId: string, digest: string): ScrollState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(scrollId, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  const { v, f, h, i, s } = (parsed ?? {}) as Record<string, unknown>;
  const decimal = (x: unknown): x is string => typeof x === 'string' && /^\d{1,20}$/.test(x) && BigInt(x) < 2n ** 64n;
  if (v !== 1 || typeof f !== 'string' || !decimal(h) || typeof i !== 'string' || !/^[0-9a-f-]{36}$/.test(i) || !decimal(s)) {
    throw scrollIdError('not a scroll id this endpoint issued');
  }
  if (f !== digest) throw scrollIdError('it was issued for another project, version or root: send the same version and root as for the first page');
  return { position: { hash: h, id: i }, span: BigInt(s) };
}

function scrollIdError(why: string): BadRequestException {
  return new BadRequestException({ message: `invalid body: scrollId: ${why}`, details: { fields: [{ path: 'scrollId', message: why }] } });
}

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Token kinds and the short tag each carries in its text, so a leaked token says what it is. */
export const TOKEN_TAGS = { product: 'pt', datasource: 'ds', oauth: 'oa' } as const;
export type TokenKind = keyof typeof TOKEN_TAGS;

const TOKEN_PATTERN = /^mld_(pt|ds|oa)_[A-Za-z0-9_-]{43}$/;
export const TOKEN_PREFIX_LENGTH = 12;

export interface IssuedToken {
  /** Shown once to the caller, never stored. */
  token: string;
  secretHash: string;
  prefix: string;
}

/** `mld_<tag>_<256 random bits, base64url>`. */
export function issueToken(kind: TokenKind): IssuedToken {
  const token = `mld_${TOKEN_TAGS[kind]}_${randomBytes(32).toString('base64url')}`;
  return { token, secretHash: hashToken(token), prefix: token.slice(0, TOKEN_PREFIX_LENGTH) };
}

/** SHA-256 is enough: the secret has 256 bits of entropy, so there is nothing to brute-force. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function isWellFormedToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

/**
 * Extracts the bearer token; says what is wrong so the 401 can tell the caller. The scheme in any
 * case and one or more spaces after it, as RFC 6750 §2.1 writes it (`"Bearer" 1*SP b64token`).
 */
export function parseBearer(header: string | undefined): { token: string } | { error: string } {
  if (!header) return { error: 'missing Authorization header (expected "Bearer <token>")' };
  const match = /^Bearer +([^\s]+)$/i.exec(header.trim());
  if (!match) return { error: 'malformed Authorization header (expected "Bearer <token>")' };
  if (!isWellFormedToken(match[1])) return { error: 'malformed token' };
  return { token: match[1] };
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

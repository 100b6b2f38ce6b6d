import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number, options: { N: number; r: number; p: number; maxmem: number }) => Promise<Buffer>;

// OWASP's scrypt minimum (N=2^17, r=8, p=1): ~0.2 s and 128 MiB per hash, the point of a slow hash.
const PARAMS = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;
const MAX_MEM = 256 * 1024 * 1024;

/**
 * `users.password_hash` format: `scrypt$N$r$p$<salt b64>$<hash b64>`. The parameters travel
 * with the hash so they can be raised later without invalidating existing passwords.
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { ...PARAMS, maxmem: MAX_MEM });
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(password.normalize('NFKC'), Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p), maxmem: MAX_MEM });
  return timingSafeEqual(actual, expected);
}

let decoy: Promise<string> | undefined;

/**
 * A sign-in for an e-mail no user has: spends a verification's time on a decoy hash (made once,
 * with the current parameters) and answers false, so an unknown e-mail is not told apart from a
 * wrong password by how soon the answer comes (ADR 0143).
 */
export async function verifyNoPassword(password: string): Promise<false> {
  decoy ??= hashPassword(randomBytes(16).toString('base64'));
  await verifyPassword(password, await decoy);
  return false;
}

import { type KeyObject, createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';

// DER prefixes of an Ed25519 key (RFC 8410): followed by the 32 raw key bytes.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const RAW_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

export class PrincipalKeyError extends Error {}

/** An Ed25519 private key from its 32-byte seed in base64/base64url, or from PKCS#8 PEM. */
export function parsePrivateKey(text: string): KeyObject {
  return parseKey(text, 'private', (raw) => createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, raw]), format: 'der', type: 'pkcs8' }));
}

/** An Ed25519 public key from its 32 bytes in base64/base64url, or from SPKI PEM. */
export function parsePublicKey(text: string): KeyObject {
  return parseKey(text, 'public', (raw) => createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' }));
}

function parseKey(text: string, kind: 'private' | 'public', fromRaw: (raw: Buffer) => KeyObject): KeyObject {
  const trimmed = text.trim();
  let key: KeyObject;
  try {
    if (trimmed.startsWith('-----BEGIN')) key = kind === 'private' ? createPrivateKey(trimmed) : createPublicKey(trimmed);
    else if (RAW_KEY.test(trimmed)) key = fromRaw(Buffer.from(trimmed, 'base64'));
    else throw new PrincipalKeyError('not a key');
  } catch {
    throw new PrincipalKeyError(`must be an Ed25519 ${kind} key: 32 bytes in base64url (npx meld keys) or PEM`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new PrincipalKeyError(`must be an Ed25519 ${kind} key, not ${key.asymmetricKeyType}`);
  return key;
}

/** The 32 raw bytes of a key, base64url: the form `meld keys` prints and the env vars take. */
export function rawKey(key: KeyObject): string {
  const der = key.type === 'private' ? key.export({ format: 'der', type: 'pkcs8' }) : key.export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - 32).toString('base64url');
}

export function generatePrincipalKeys(): { privateKey: string; publicKey: string } {
  const pair = generateKeyPairSync('ed25519');
  return { privateKey: rawKey(pair.privateKey), publicKey: rawKey(pair.publicKey) };
}

/**
 * The local stack's key pair, derived from a public phrase so that `npm start`, `npm test` and
 * apps started by hand agree without passing keys around. Everybody can compute it: apps
 * refuse it outside the local stack (ADR 0101, ADR 0102).
 */
export const DEV_PRINCIPAL_KEYS = (() => {
  const seed = createHash('sha256').update('meld local stack principal key: never outside the local stack').digest();
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  return { privateKey, publicKey: createPublicKey(privateKey) };
})();

export function isDevKey(key: KeyObject): boolean {
  return rawKey(key.type === 'private' ? createPublicKey(key) : key) === rawKey(DEV_PRINCIPAL_KEYS.publicKey);
}

import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { decodePrincipal, encodePrincipal, hasScopes, type Principal } from './principal';
import { DEV_PRINCIPAL_KEYS, generatePrincipalKeys, isDevKey, parsePrivateKey, parsePublicKey, rawKey } from './principal-keys';
import { hashToken, issueToken, parseBearer } from './tokens';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const principal: Omit<Principal, 'iat'> = {
  kind: 'product',
  tokenId: 't1',
  organizationId: 'o1',
  plan: 's',
  scopes: ['PROJECT_AUDIENCE_READ'],
  project: { id: 'p1', uid: 'demo', dataMode: 'normal' },
  dataSourceId: null,
  requestId: 'r1',
};
const binding = { method: 'GET', url: '/v1/project/demo/audience/search/email/a%40b.c?x=1', app: 'audience' };
const received = { ...binding, requestId: 'r1' };

describe('signed principal', () => {
  it('round-trips for the request it was signed for', () => {
    expect(decodePrincipal(encodePrincipal(principal, binding, privateKey, 1000), received, publicKey, 1500)).toEqual({ ...principal, iat: 1000 });
  });

  it('refuses a captured header replayed on another path, query, method, app or request id', () => {
    const good = encodePrincipal(principal, binding, privateKey, 1000);
    for (const other of [{ url: '/v1/project/demo/audience/search/phone/1' }, { url: '/v1/project/demo/audience/search/email/a%40b.c' }, { method: 'DELETE' }, { app: 'ingest' }, { requestId: 'r2' }]) {
      expect(() => decodePrincipal(good, { ...received, ...other }, publicKey, 1000)).toThrow(/another request/);
    }
  });

  it('refuses a missing, tampered, foreign-signed or expired header', () => {
    const good = encodePrincipal(principal, binding, privateKey, 1000);
    expect(() => decodePrincipal(undefined, received, publicKey, 1000)).toThrow(/missing/);
    const [payload, sig] = good.split('.');
    const forged = Buffer.from(JSON.stringify({ ...principal, kind: 'admin', iat: 1000, bind: binding })).toString('base64url');
    expect(() => decodePrincipal(`${forged}.${sig}`, received, publicKey, 1000)).toThrow(/signature/);
    expect(() => decodePrincipal(`${payload}.${sig}x`, received, publicKey, 1000)).toThrow(/signature/);
    expect(() => decodePrincipal(`${payload}`, received, publicKey, 1000)).toThrow(/signature/);
    const other = generateKeyPairSync('ed25519');
    expect(() => decodePrincipal(encodePrincipal(principal, binding, other.privateKey, 1000), received, publicKey, 1000)).toThrow(/signature/);
    expect(() => decodePrincipal(good, received, publicKey, 1000 + 5_001)).toThrow(/expired/);
    expect(() => decodePrincipal(good, received, publicKey, 1000 - 1_001)).toThrow(/expired/);
  });

  it('never accepts a mutated header', () => {
    const good = encodePrincipal(principal, binding, privateKey, 1000);
    fc.assert(
      fc.property(fc.nat(good.length - 1), fc.string({ minLength: 1, maxLength: 1 }), (i, c) => {
        const bad = good.slice(0, i) + c + good.slice(i + 1);
        fc.pre(bad !== good);
        expect(() => decodePrincipal(bad, received, publicKey, 1000)).toThrow();
      }),
    );
  });

  it('refuses a signature whose last character differs only in spare bits (the counterexample of seed -858738279)', () => {
    const good = encodePrincipal(principal, binding, privateKey, 1000);
    const last = good[good.length - 1];
    // The 86th base64url character of 64 bytes carries 4 bits: its 2 low bits are spare.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = alphabet[alphabet.indexOf(last) ^ 1];
    const bad = good.slice(0, -1) + twin;
    expect(Buffer.from(bad.split('.')[1], 'base64url')).toEqual(Buffer.from(good.split('.')[1], 'base64url'));
    expect(() => decodePrincipal(bad, received, publicKey, 1000)).toThrow('invalid principal signature');
  });

  it('reads keys as raw base64url or PEM, and knows the development pair', () => {
    const keys = generatePrincipalKeys();
    const [priv, pub] = [parsePrivateKey(keys.privateKey), parsePublicKey(keys.publicKey)];
    expect(decodePrincipal(encodePrincipal(principal, binding, priv, 1000), received, pub, 1000)).toMatchObject({ tokenId: 't1' });
    expect(rawKey(parsePublicKey(pub.export({ format: 'pem', type: 'spki' }) as string))).toBe(keys.publicKey);
    expect(rawKey(parsePrivateKey(priv.export({ format: 'pem', type: 'pkcs8' }) as string))).toBe(keys.privateKey);
    expect(() => parsePublicKey('meld-dev-principal-secret')).toThrow(/Ed25519 public key/);
    expect(() => parsePrivateKey(generateKeyPairSync('x25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string)).toThrow(/Ed25519/);
    expect(isDevKey(DEV_PRINCIPAL_KEYS.publicKey) && isDevKey(DEV_PRINCIPAL_KEYS.privateKey)).toBe(true);
    expect(isDevKey(pub) || isDevKey(priv)).toBe(false);
  });

  it('lists missing scopes; admin needs none', () => {
    expect(hasScopes(principal, ['PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_EVENTS'])).toEqual(['PROJECT_AUDIENCE_DATA_EVENTS']);
    expect(hasScopes({ kind: 'admin', scopes: [] }, ['PROJECT_DIRECT_WRITE'])).toEqual([]);
  });
});

describe('tokens', () => {
  it('issues well-formed tokens whose hash is stored, not the token', () => {
    const { token, secretHash, prefix } = issueToken('datasource');
    expect(token).toMatch(/^mld_ds_/);
    expect(secretHash).toBe(hashToken(token));
    expect(secretHash).not.toContain(token);
    expect(token.startsWith(prefix)).toBe(true);
    expect(parseBearer(`Bearer ${token}`)).toEqual({ token });
  });

  it('says why a header is refused', () => {
    expect(parseBearer(undefined)).toEqual({ error: expect.stringMatching(/missing/) });
    expect(parseBearer('Basic abc')).toEqual({ error: expect.stringMatching(/malformed Authorization/) });
    expect(parseBearer('Bearer nope')).toEqual({ error: 'malformed token' });
  });
});

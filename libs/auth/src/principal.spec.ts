import { createSecretKey, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { PrincipalError, StalePrincipalError, decodePrincipal, encodePrincipal, hasScopes, type Principal } from './principal';
import { DEV_PRINCIPAL_MASTER_KEY, PrincipalKeyring, derivePrincipalKey, devPrincipalKey, generatePrincipalKeys, parsePrincipalKey, principalKeyEnv, rawKey } from './principal-keys';
import { hashToken, issueToken, parseBearer } from './tokens';

// The gateway signs with the app's key derived from its master key; the app checks with that same key (ADR 0256).
const master = createSecretKey(randomBytes(32));
const privateKey = derivePrincipalKey(master, 'audience');
const publicKey = parsePrincipalKey(rawKey(privateKey));
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
    const otherDeployment = derivePrincipalKey(createSecretKey(randomBytes(32)), 'audience');
    expect(() => decodePrincipal(encodePrincipal(principal, binding, otherDeployment, 1000), received, publicKey, 1000)).toThrow(/signature/);
    expect(() => decodePrincipal(good, received, publicKey, 1000 + 5_001)).toThrow(/expired/);
    expect(() => decodePrincipal(good, received, publicKey, 1000 - 1_001)).toThrow(/expired/);
  });

  it('tells a late principal of this very request (a delay to retry) from a replay, whatever its age (ADR 0102)', () => {
    const good = encodePrincipal(principal, binding, privateKey, 1000);
    const thrown = (received2: typeof received, at: number) => {
      try {
        decodePrincipal(good, received2, publicKey, at);
      } catch (err) {
        return err;
      }
      return null;
    };
    expect(thrown(received, 1000 + 5_000)).toBeNull();
    expect(thrown(received, 1000 + 5_001)).toBeInstanceOf(StalePrincipalError);
    expect(thrown(received, 1000 - 1_001)).toBeInstanceOf(StalePrincipalError);
    const replayedLate = thrown({ ...received, requestId: 'r2' }, 1000 + 60_000);
    expect(replayedLate).toBeInstanceOf(PrincipalError);
    expect(replayedLate).not.toBeInstanceOf(StalePrincipalError);
    expect((replayedLate as Error).message).toMatch(/another request/);
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
    // The 43rd base64url character of 32 bytes carries 4 bits: its 2 low bits are spare.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const twin = alphabet[alphabet.indexOf(last) ^ 1];
    const bad = good.slice(0, -1) + twin;
    expect(Buffer.from(bad.split('.')[1], 'base64url')).toEqual(Buffer.from(good.split('.')[1], 'base64url'));
    expect(() => decodePrincipal(bad, received, publicKey, 1000)).toThrow('invalid principal signature');
  });

  it('refuses a principal signed with another app\'s key, even when it names this app', () => {
    // What a compromised ingest could make with its own key: a principal for the audience app.
    const ingestKey = derivePrincipalKey(master, 'ingest');
    expect(() => decodePrincipal(encodePrincipal(principal, binding, ingestKey, 1000), received, publicKey, 1000)).toThrow('invalid principal signature');
  });

  it('derives one key per app from the master key, the same every time, and reads keys as 32 bytes in base64url', () => {
    const keyring = new PrincipalKeyring(master);
    expect(keyring.forApp('audience').equals(publicKey)).toBe(true);
    expect(keyring.forApp('audience')).toBe(keyring.forApp('audience'));
    expect(keyring.forApp('ingest').equals(keyring.forApp('audience'))).toBe(false);
    const env = generatePrincipalKeys(['audience', 'identity-merge']);
    expect(Object.keys(env)).toEqual(['MELD_PRINCIPAL_MASTER_KEY', 'MELD_PRINCIPAL_KEY_AUDIENCE', 'MELD_PRINCIPAL_KEY_IDENTITY_MERGE']);
    expect(rawKey(derivePrincipalKey(parsePrincipalKey(env.MELD_PRINCIPAL_MASTER_KEY!), 'identity-merge'))).toBe(env[principalKeyEnv('identity-merge')]);
    expect(() => parsePrincipalKey('meld-dev-principal-secret')).toThrow(/32 bytes in base64url/);
    expect(() => parsePrincipalKey(randomBytes(31).toString('base64url'))).toThrow(/32 bytes/);
    expect(devPrincipalKey('audience').equals(derivePrincipalKey(DEV_PRINCIPAL_MASTER_KEY, 'audience'))).toBe(true);
    expect(devPrincipalKey('ingest').equals(devPrincipalKey('audience'))).toBe(false);
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
    expect(parseBearer(`Bearer\t${issueToken('product').token}`)).toEqual({ error: expect.stringMatching(/malformed Authorization/) });
  });

  it('takes the scheme in any case and one or more spaces before the token (RFC 6750 §2.1: "Bearer" 1*SP b64token)', () => {
    const { token } = issueToken('product');
    for (const header of [`Bearer ${token}`, `bearer ${token}`, `BEARER  ${token}`, `Bearer   ${token} `]) expect(parseBearer(header)).toEqual({ token });
  });
});

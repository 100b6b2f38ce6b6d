import fc from 'fast-check';
import { decodePrincipal, encodePrincipal, hasScopes, type Principal } from './principal';
import { hashToken, issueToken, parseBearer } from './tokens';

const secret = 'a-test-secret-of-enough-length';
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

describe('signed principal', () => {
  it('round-trips', () => {
    expect(decodePrincipal(encodePrincipal(principal, secret, 1000), secret, 1500)).toEqual({ ...principal, iat: 1000 });
  });

  it('refuses a missing, tampered, foreign-signed or stale header', () => {
    const good = encodePrincipal(principal, secret, 1000);
    expect(() => decodePrincipal(undefined, secret, 1000)).toThrow(/missing/);
    const [payload, sig] = good.split('.');
    const forged = Buffer.from(JSON.stringify({ ...principal, kind: 'admin', iat: 1000 })).toString('base64url');
    expect(() => decodePrincipal(`${forged}.${sig}`, secret, 1000)).toThrow(/signature/);
    expect(() => decodePrincipal(`${payload}.${sig}x`, secret, 1000)).toThrow(/signature/);
    expect(() => decodePrincipal(good, 'another-secret-of-enough-length', 1000)).toThrow(/signature/);
    expect(() => decodePrincipal(good, secret, 1000 + 61_000)).toThrow(/expired/);
  });

  it('never accepts a mutated header', () => {
    const good = encodePrincipal(principal, secret, 1000);
    fc.assert(
      fc.property(fc.nat(good.length - 1), fc.string({ minLength: 1, maxLength: 1 }), (i, c) => {
        const bad = good.slice(0, i) + c + good.slice(i + 1);
        fc.pre(bad !== good);
        expect(() => decodePrincipal(bad, secret, 1000)).toThrow();
      }),
    );
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

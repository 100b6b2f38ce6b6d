import { DEV_PRINCIPAL_KEYS, generatePrincipalKeys, rawKey } from '@meld/auth';
import { loadPrincipalPrivateKey, loadPrincipalPublicKey, requireNonDevSecret } from './secrets';

const LOCAL = { MELD_ALLOW_DEV_SECRETS: '1' };
const devPublic = rawKey(DEV_PRINCIPAL_KEYS.publicKey);
const devPrivate = rawKey(DEV_PRINCIPAL_KEYS.privateKey);

describe('development secrets (ADR 0101)', () => {
  it('uses the development key pair on the local stack only', () => {
    expect(rawKey(loadPrincipalPublicKey(LOCAL))).toBe(devPublic);
    expect(rawKey(loadPrincipalPrivateKey(LOCAL))).toBe(devPrivate);
    expect(() => loadPrincipalPublicKey({})).toThrow(/MELD_PRINCIPAL_PUBLIC_KEY: required outside the local stack/);
    expect(() => loadPrincipalPrivateKey({})).toThrow(/MELD_PRINCIPAL_PRIVATE_KEY: required outside the local stack/);
    expect(() => loadPrincipalPublicKey({ ...LOCAL, NODE_ENV: 'production' })).toThrow(/MELD_PRINCIPAL_PUBLIC_KEY: required/);
  });

  it('refuses the development keys set explicitly outside the local stack', () => {
    expect(() => loadPrincipalPublicKey({ MELD_PRINCIPAL_PUBLIC_KEY: devPublic })).toThrow(/MELD_PRINCIPAL_PUBLIC_KEY: is the public development key/);
    expect(() => loadPrincipalPrivateKey({ MELD_PRINCIPAL_PRIVATE_KEY: devPrivate, NODE_ENV: 'production', ...LOCAL })).toThrow(/MELD_PRINCIPAL_PRIVATE_KEY: is the public development key/);
  });

  it('takes a deployment key pair anywhere and names a malformed one', () => {
    const keys = generatePrincipalKeys();
    expect(rawKey(loadPrincipalPublicKey({ MELD_PRINCIPAL_PUBLIC_KEY: keys.publicKey, NODE_ENV: 'production' }))).toBe(keys.publicKey);
    expect(rawKey(loadPrincipalPrivateKey({ MELD_PRINCIPAL_PRIVATE_KEY: keys.privateKey }))).toBe(keys.privateKey);
    expect(() => loadPrincipalPublicKey({ MELD_PRINCIPAL_PUBLIC_KEY: 'meld-dev-principal-secret' })).toThrow(/MELD_PRINCIPAL_PUBLIC_KEY: must be an Ed25519 public key/);
  });

  it('refuses a public admin token, or none, outside the local stack', () => {
    const known = ['meld-dev-admin'];
    expect(() => requireNonDevSecret({}, 'MELD_ADMIN_TOKEN', known)).toThrow(/MELD_ADMIN_TOKEN: required outside the local stack/);
    expect(() => requireNonDevSecret({ MELD_ADMIN_TOKEN: 'meld-dev-admin', NODE_ENV: 'production', ...LOCAL }, 'MELD_ADMIN_TOKEN', known)).toThrow(/MELD_ADMIN_TOKEN: is a public development value/);
    expect(() => requireNonDevSecret({ MELD_ADMIN_TOKEN: 'a-real-secret-of-this-deployment' }, 'MELD_ADMIN_TOKEN', known)).not.toThrow();
    expect(() => requireNonDevSecret({ ...LOCAL }, 'MELD_ADMIN_TOKEN', known)).not.toThrow();
  });
});

import { DEV_PRINCIPAL_MASTER_KEY, devPrincipalKey, generatePrincipalKeys, rawKey } from '@meld/auth';
import { loadPrincipalAppKey, loadPrincipalMasterKey, requireNonDevSecret } from './secrets';

const LOCAL = { MELD_ALLOW_DEV_SECRETS: '1' };
const devMaster = rawKey(DEV_PRINCIPAL_MASTER_KEY);
const devAudience = rawKey(devPrincipalKey('audience'));

describe('development secrets (ADR 0101)', () => {
  it('uses the development keys on the local stack only', () => {
    expect(rawKey(loadPrincipalAppKey('audience', LOCAL))).toBe(devAudience);
    expect(rawKey(loadPrincipalMasterKey(LOCAL))).toBe(devMaster);
    expect(() => loadPrincipalAppKey('audience', {})).toThrow(/MELD_PRINCIPAL_KEY_AUDIENCE: required outside the local stack/);
    expect(() => loadPrincipalMasterKey({})).toThrow(/MELD_PRINCIPAL_MASTER_KEY: required outside the local stack/);
    expect(() => loadPrincipalAppKey('identity-merge', { ...LOCAL, NODE_ENV: 'production' })).toThrow(/MELD_PRINCIPAL_KEY_IDENTITY_MERGE: required/);
  });

  it('refuses the development keys set explicitly outside the local stack', () => {
    expect(() => loadPrincipalAppKey('audience', { MELD_PRINCIPAL_KEY_AUDIENCE: devAudience })).toThrow(/MELD_PRINCIPAL_KEY_AUDIENCE: is the public development key/);
    expect(() => loadPrincipalMasterKey({ MELD_PRINCIPAL_MASTER_KEY: devMaster, NODE_ENV: 'production', ...LOCAL })).toThrow(/MELD_PRINCIPAL_MASTER_KEY: is the public development key/);
  });

  it('takes a deployment\'s keys anywhere and names a malformed one', () => {
    const keys = generatePrincipalKeys(['audience']);
    expect(rawKey(loadPrincipalAppKey('audience', { ...keys, NODE_ENV: 'production' }))).toBe(keys.MELD_PRINCIPAL_KEY_AUDIENCE);
    expect(rawKey(loadPrincipalMasterKey(keys))).toBe(keys.MELD_PRINCIPAL_MASTER_KEY);
    expect(() => loadPrincipalAppKey('audience', { MELD_PRINCIPAL_KEY_AUDIENCE: 'meld-dev-principal-secret' })).toThrow(/MELD_PRINCIPAL_KEY_AUDIENCE: must be 32 bytes in base64url/);
  });

  it('refuses a public admin token, or none, outside the local stack', () => {
    const known = ['meld-dev-admin'];
    expect(() => requireNonDevSecret({}, 'MELD_ADMIN_TOKEN', known)).toThrow(/MELD_ADMIN_TOKEN: required outside the local stack/);
    expect(() => requireNonDevSecret({ MELD_ADMIN_TOKEN: 'meld-dev-admin', NODE_ENV: 'production', ...LOCAL }, 'MELD_ADMIN_TOKEN', known)).toThrow(/MELD_ADMIN_TOKEN: is a public development value/);
    expect(() => requireNonDevSecret({ MELD_ADMIN_TOKEN: 'a-real-secret-of-this-deployment' }, 'MELD_ADMIN_TOKEN', known)).not.toThrow();
    expect(() => requireNonDevSecret({ ...LOCAL }, 'MELD_ADMIN_TOKEN', known)).not.toThrow();
  });
});

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { DEV_PRINCIPAL_MASTER_KEY, devPrincipalKey, generatePrincipalKeys, rawKey } from '@meld/auth';
import { testEnv } from '@meld/testing';

// Outside the local stack the apps refuse to start with the public development secrets, and
// say which variable to set (ADR 0101). The apps run as built, like in a container.
const root = join(__dirname, '../..');

function start(app: string, vars: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const env = testEnv();
  const child = spawn(process.execPath, [join('apps', app, 'dist', 'main.js')], {
    cwd: root,
    // Not the test process's environment: that one is the local stack's.
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'error', PORT: '0', MELD_PORT: '0', MELD_POSTGRES_URL: env.postgresUrl, MELD_REDIS_URL: env.redisUrl, ...vars },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGTERM'), 20000);
  return new Promise((resolve) => child.on('exit', (code) => (clearTimeout(timer), resolve({ code, stderr }))));
}

describe('public development secrets outside the local stack', () => {
  const keys = generatePrincipalKeys([]);
  const production = { NODE_ENV: 'production', MELD_PRINCIPAL_MASTER_KEY: keys.MELD_PRINCIPAL_MASTER_KEY!, MELD_ADMIN_TOKEN: 'an-admin-token-of-this-deployment' };

  it.each([
    ['the development admin token', { MELD_ADMIN_TOKEN: 'meld-dev-admin' }, /MELD_ADMIN_TOKEN: is a public development value/],
    ['the test admin token, even with the local switch', { MELD_ADMIN_TOKEN: 'meld-test-admin', MELD_ALLOW_DEV_SECRETS: '1' }, /MELD_ADMIN_TOKEN: is a public development value/],
    ['no admin token', { MELD_ADMIN_TOKEN: '' }, /MELD_ADMIN_TOKEN: required outside the local stack/],
    ['no signing key', { MELD_PRINCIPAL_MASTER_KEY: '' }, /MELD_PRINCIPAL_MASTER_KEY: required outside the local stack/],
    ['the development signing key', { MELD_PRINCIPAL_MASTER_KEY: rawKey(DEV_PRINCIPAL_MASTER_KEY) }, /MELD_PRINCIPAL_MASTER_KEY: is the public development key/],
  ])('the gateway refuses %s', async (_, vars, message) => {
    const { code, stderr } = await start('gateway', { ...production, ...vars });
    expect(code).toBe(1);
    expect(stderr).toMatch(message);
  }, 30000);

  it('an internal app refuses to run without its principal key, or with the development one', async () => {
    const missing = await start('readiness', { NODE_ENV: 'production' });
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringMatching(/MELD_PRINCIPAL_KEY_READINESS: required outside the local stack/)]);
    const dev = await start('readiness', { MELD_PRINCIPAL_KEY_READINESS: rawKey(devPrincipalKey('readiness')) });
    expect([dev.code, dev.stderr]).toEqual([1, expect.stringMatching(/MELD_PRINCIPAL_KEY_READINESS: is the public development key/)]);
  }, 30000);
});

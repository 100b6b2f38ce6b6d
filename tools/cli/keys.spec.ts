import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { INTERNAL_APPS } from '@meld/contracts';
import { derivePrincipalKey, parsePrincipalKey, principalKeyEnv, rawKey } from '@meld/auth';

describe('meld keys', () => {
  it('prints the admin token, the master key and every internal app key derived as the gateway derives it (ADR 0256)', () => {
    const out = spawnSync(process.execPath, [join(__dirname, 'meld.js'), 'keys'], { encoding: 'utf8' });
    expect(out.status).toBe(0);
    const env = new Map(out.stdout.trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const));
    expect([...env.keys()]).toEqual(['MELD_ADMIN_TOKEN', 'MELD_PRINCIPAL_MASTER_KEY', ...INTERNAL_APPS.map(principalKeyEnv)]);
    const master = parsePrincipalKey(env.get('MELD_PRINCIPAL_MASTER_KEY')!);
    for (const app of INTERNAL_APPS) expect([app, env.get(principalKeyEnv(app))]).toEqual([app, rawKey(derivePrincipalKey(master, app))]);
  });
});

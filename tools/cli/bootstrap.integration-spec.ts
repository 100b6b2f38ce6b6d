import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DATA_SOURCE } from '@meld/db';
import type { DataSource } from 'typeorm';
import { type AdminGateway, TEST_ADMIN_TOKEN, startAdminGateway, unique } from '../../apps/gateway/test/admin-support/admin-gateway';
import { UID_PATTERN as API_UID_PATTERN, UID_RULE as API_UID_RULE } from '../../apps/gateway/src/admin/shared/slug';

// `meld bootstrap` against the gateway's admin API on the test stores: a --project the API
// refuses is refused before the organization exists (it left one with no project behind).
const ROOT = join(__dirname, '../..');
const { UID_PATTERN, UID_RULE } = require('./commands/bootstrap') as { UID_PATTERN: RegExp; UID_RULE: string };

describe('meld bootstrap', () => {
  let gw: AdminGateway;
  let db: DataSource;
  beforeAll(async () => {
    gw = await startAdminGateway();
    db = gw.app.get(DATA_SOURCE);
  });
  afterAll(() => gw.close());

  // Not spawnSync: the gateway answers from this very process.
  const bootstrap = async (args: string[]) => {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(ROOT, 'tools/cli/meld.js'), 'bootstrap', ...args], {
        cwd: ROOT,
        env: { ...process.env, MELD_GATEWAY_URL: gw.base, MELD_ADMIN_TOKEN: TEST_ADMIN_TOKEN },
        timeout: 30000,
      });
      return { code: 0, out: stdout + stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, out: e.stdout + e.stderr };
    }
  };
  const organizationsNamed = async (name: string) => Number((await db.query(`SELECT count(*) AS n FROM organizations WHERE name = $1`, [name]))[0].n);

  it('refuses a --project another project holds before creating anything', async () => {
    const { body: org } = await gw.call('POST', '/organizations', { name: unique('bootstrap-holder'), plan: 's' });
    const uid = unique('taken');
    expect((await gw.call('POST', `/organizations/${org.entity.id}/projects`, { name: 'Holder', uid })).status).toBe(201);
    const name = unique('bootstrap-taken');
    const { code, out } = await bootstrap(['--name', name, '--project', uid]);
    expect(code).toBe(1);
    expect(out).toContain(`--project: project uid "${uid}" already exists; nothing was created`);
    expect(await organizationsNamed(name)).toBe(0);
  });

  it('refuses a malformed --project before any call, naming the rule (exit 2)', async () => {
    const name = unique('bootstrap-malformed');
    const { code, out } = await bootstrap(['--name', name, '--project', 'Not_A_Uid']);
    expect(code).toBe(2);
    expect(out).toContain(`meld bootstrap: --project ${API_UID_RULE} (got "Not_A_Uid")`);
    expect(out).toContain('usage: meld bootstrap');
    expect(await organizationsNamed(name)).toBe(0);
  });

  it('creates the organization and its project with a free --project', async () => {
    const name = unique('bootstrap-free');
    const uid = unique('free');
    const { code, out } = await bootstrap(['--json', '--name', name, '--project', uid]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ organization: { name }, project: { uid } });
    expect(await organizationsNamed(name)).toBe(1);
  });

  it('checks --project by the rule the admin API applies', () => {
    expect([UID_PATTERN.source, UID_RULE]).toEqual([API_UID_PATTERN.source, API_UID_RULE]);
  });
});

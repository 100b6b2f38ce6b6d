import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// tools/ is plain CommonJS outside the Nx graph.
const { whatIsDown } = require('./apps');

/**
 * `meld start` in a process group of its own, killed whole after 15 s: should it ever get past its
 * checks, the apps it spawned go with it instead of running on against the shared stack.
 */
async function meldStart(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(__dirname, 'meld.js'), 'start'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* the group is gone */
    }
  };
  const timer = setTimeout(killGroup, 15000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  killGroup();
  return { code, stdout, stderr };
}

describe('meld start: what is down when the apps are not ready', () => {
  it("reads the gateway's operations port, which names the apps and stores that are down (the public /healthz is bare)", async () => {
    const detail = JSON.stringify({ status: 'error', error: { audience: { status: 'down', message: 'clickhouse: connect ECONNREFUSED' } } });
    const ops = createServer((req, res) => res.writeHead(req.url === '/healthz' ? 503 : 404).end(detail));
    await new Promise<void>((resolve) => ops.listen(0, '127.0.0.1', resolve));
    try {
      expect(await whatIsDown((ops.address() as AddressInfo).port, '{"status":"error"}')).toBe(detail);
    } finally {
      ops.close();
    }
  });

  it('falls back to the last public answer when the operations port does not answer', async () => {
    expect(await whatIsDown(9, '{"status":"error"}')).toBe('{"status":"error"}');
  });
});

describe('meld start: ports another program holds', () => {
  const { planApps, portsInUse } = require('./apps');

  it('names each app whose port is taken, and the operations port, before anything starts', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as AddressInfo).port;
    try {
      // The audience app sits 3 ports above the gateway; the operations port is another one.
      expect(await portsInUse(planApps(taken - 3), { opsPort: taken })).toEqual(
        expect.arrayContaining([
          { name: 'audience', port: taken },
          { name: 'gateway operations', port: taken },
        ]),
      );
    } finally {
      holder.close();
    }
    expect(await portsInUse(planApps(taken - 3), { opsPort: taken })).not.toContainEqual({ name: 'audience', port: taken });
  });

  it('meld start on a taken MELD_PORT exits 1 naming the port, before installing, building or starting anything', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as AddressInfo).port;
    try {
      const { code, stdout, stderr } = await meldStart({ MELD_PORT: String(taken) });
      const out = `${stdout}${stderr}`;
      expect(code).toBe(1);
      expect(out).toMatch(new RegExp(`port ${taken} \\(gateway\\).* already in use`));
      expect(out).toContain('MELD_PORT=<another>');
      expect(out).not.toContain('▸');
    } finally {
      holder.close();
    }
  });
});

describe('meld start: MELD_PORT', () => {
  it.each(['abc', '0', '8080.5', '65500', '-1'])('MELD_PORT=%s is an error naming it, before anything starts', async (value) => {
    const res = await meldStart({ MELD_PORT: value });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`MELD_PORT must be a whole number from 1 to 65435`);
    expect(res.stderr).toContain(`got "${value}"`);
    expect(res.stdout).not.toContain('▸');
  });
});

describe('meld start: apps that never get ready', () => {
  it('are stopped when the readiness wait gives up, so meld start exits 1 instead of running on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meld-start-'));
    const script = `
      const { startApps } = require(${JSON.stringify(join(__dirname, 'apps.js'))});
      // An invalid Postgres URL: every app refuses its configuration and exits at once.
      const apps = startApps({ env: { MELD_POSTGRES_URL: 'x' }, gatewayPort: 47000, logDir: ${JSON.stringify(dir)}, appsFile: ${JSON.stringify(join(dir, 'apps.json'))} });
      apps.ready(1500).then(() => process.exit(3), (err) => { console.error(err.message); process.exitCode = 1; });`;
    try {
      // Only PATH: the apps must not see this run's MELD_* store URLs.
      // Its own process group, killed whole at the end: no app outlives the test.
      const child = spawn(process.execPath, ['-e', script], { env: { PATH: process.env.PATH }, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err += c));
      const killGroup = () => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* the group is gone */
        }
      };
      const timer = setTimeout(killGroup, 20000);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      clearTimeout(timer);
      killGroup();
      expect([code, err]).toEqual([1, expect.stringContaining('apps not ready after 1.5 s (stopped)')]);
      expect(existsSync(join(dir, 'apps.json'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30000);
});

import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

// tools/ is plain CommonJS outside the Nx graph.
const { whatIsDown } = require('./apps');

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
      // Not spawnSync: the holder lives in this process's event loop.
      const child = spawn(process.execPath, [join(__dirname, 'meld.js'), 'start'], { env: { ...process.env, MELD_PORT: String(taken) }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c));
      child.stderr.on('data', (c: Buffer) => (out += c));
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      clearTimeout(timer);
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
  it.each(['abc', '0', '8080.5', '65500', '-1'])('MELD_PORT=%s is an error naming it, before anything starts', (value) => {
    const res = spawnSync(process.execPath, [join(__dirname, 'meld.js'), 'start'], { encoding: 'utf8', timeout: 15000, env: { ...process.env, MELD_PORT: value } });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain(`MELD_PORT must be a whole number from 1 to 65435`);
    expect(res.stderr).toContain(`got "${value}"`);
    expect(res.stdout).not.toContain('▸');
  });
});

import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

// `meld doctor` on the real local stack (npm test has brought it up): stores up with their
// versions, a port held by a stranger reported with what to do, --help doing nothing else.
const ROOT = join(__dirname, '../..');
const doctor = (args: string[], env: Record<string, string> = {}) => {
  const res = spawnSync(process.execPath, [join(ROOT, 'tools/cli/meld.js'), 'doctor', ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60000 });
  return { code: res.status, out: res.stdout + res.stderr };
};

describe('meld doctor', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('reports each store with its version, and a port in use with the fix', () => {
    // The stranger holds the "gateway" port: MELD_PORT moves every app port by the same offset.
    const { code, out } = doctor(['--json'], { MELD_PORT: String(port), MELD_GATEWAY_URL: `http://127.0.0.1:${port}` });
    const checks = JSON.parse(out) as Array<{ name: string; level: string; detail: string; fix?: string }>;
    const byName = new Map(checks.map((c) => [c.name, c]));
    expect(byName.get('node')!.level).toBe('ok');
    expect(byName.get('store postgres')!.detail).toMatch(/PostgreSQL \d+/);
    expect(byName.get('store clickhouse')!.detail).toMatch(/ClickHouse \d+\.\d+/);
    expect(byName.get('store redis')!.detail).toMatch(/Redis server v=\d/);
    expect(byName.get('store kafka')!.level).toBe('ok');
    expect(byName.get(`port ${port}`)).toEqual({ name: `port ${port}`, level: 'warn', detail: 'in use (gateway needs it)', fix: expect.stringContaining('MELD_PORT') });
    expect(byName.get('disk')!.detail).toMatch(/GB free/);
    expect(code).toBe(checks.some((c) => c.level === 'fail') ? 1 : 0);
  });

  it('--help prints help and checks nothing; an unknown flag is an error', () => {
    const help = doctor(['--help']);
    expect([help.code, help.out.trim().split('\n')[0]]).toEqual([0, 'usage: meld doctor [--json]']);
    const bad = doctor(['--fix']);
    expect(bad.code).not.toBe(0);
    expect(bad.out).toContain("Unknown option '--fix'");
  });
});

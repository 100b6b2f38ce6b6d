import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { ALL_SCOPES } from '@meld/contracts';
import { testEnv, waitFor } from '@meld/testing';

// The access logs of a real run must not carry the emails and phones callers put in URLs
// (ADR 0104): the gateway and the audience app run as processes, as `npm start` runs them,
// their every log line is kept, and the searches are called with values found nowhere else.
const { spawnPrefixed } = require(join(__dirname, '../../tools/cli/lib.js'));

const EMAIL = `pii-${randomUUID().slice(0, 8)}@example.com`;
const PHONE = `+3361${String(Date.now()).slice(-7)}`;

/** Distinct free ports: every listener stays open until all are known (closing one first lets the next call get it again). */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
      const server = createServer().listen(0, '127.0.0.1', () => resolve(server));
      server.on('error', reject);
    })),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

describe('access logs carry no PII', () => {
  const lines: string[] = [];
  const children: ChildProcess[] = [];
  let base = '';

  async function admin(method: string, path: string, body?: unknown) {
    const res = await fetch(`${base}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${process.env.MELD_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { entity: { id: string; uid?: string }; metadata?: { token?: string } };
  }

  beforeAll(async () => {
    testEnv();
    const [gatewayPort, audiencePort] = await freePorts(2);
    base = `http://127.0.0.1:${gatewayPort}`;
    const env = { ...process.env, LOG_LEVEL: 'info', MELD_AUDIENCE_URL: `http://127.0.0.1:${audiencePort}`, MELD_RATE_LIMIT_NAMESPACE: `pii-logs-${process.pid}` };
    const start = (app: string, port: number) =>
      children.push(spawnPrefixed(app, process.execPath, [join('apps', app, 'dist', 'main.js')], { env: { ...env, PORT: String(port), MELD_PORT: String(port) }, onLine: (l: string) => lines.push(l) }));
    start('gateway', gatewayPort);
    start('audience', audiencePort);
    for (const port of [gatewayPort, audiencePort]) {
      await waitFor(`app on ${port}`, async () => (await fetch(`http://127.0.0.1:${port}/livez`).catch(() => undefined))?.ok === true, { timeoutMs: 60000 });
    }
  }, 90000);

  afterAll(async () => {
    await Promise.all(children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve(undefined) : (c.once('exit', resolve), c.kill('SIGTERM'))))));
  });

  it('redacts the search values, user ids, query strings and mistyped routes', async () => {
    const org = (await admin('POST', '/organizations', { name: `pii-${randomUUID().slice(0, 8)}`, plan: 's' })).entity.id;
    const project = (await admin('POST', `/organizations/${org}/projects`, { name: 'PII logs' })).entity.uid!;
    const token = (await admin('POST', `/organizations/${org}/tokens`, { scopes: [...ALL_SCOPES], projects: [project] })).metadata!.token!;
    const v1 = `${base}/v1/project/${project}`;
    const calls = [
      `${v1}/audience/search/email/${encodeURIComponent(EMAIL)}`,
      `${v1}/audience/search/email/${EMAIL}`,
      `${v1}/audience/search/phone/${encodeURIComponent(PHONE)}`,
      `${v1}/audience/search/phone/${PHONE}`,
      `${v1}/audience/user/${EMAIL}`,
      `${v1}/datasource?_q=${EMAIL}`,
      `${v1}/audience/serch/email/${EMAIL}`,
    ];
    const statuses = [];
    for (const url of calls) statuses.push((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status);
    // Reached the audience app (answered there, not refused at the door), so both apps logged them.
    expect(statuses.slice(0, 6).every((s) => s !== 401 && s < 500)).toBe(true);
    const requestLog = () => lines.filter((l) => l.includes('"request completed"'));
    await waitFor('both apps logged the searches', async () => requestLog().some((l) => l.includes('"app":"audience"') && l.includes('search/phone')), { timeoutMs: 10000 });

    const leaks = lines.filter((l) => [EMAIL, encodeURIComponent(EMAIL), PHONE, encodeURIComponent(PHONE), PHONE.slice(1)].some((v) => l.includes(v)));
    expect(leaks).toEqual([]);
    expect(requestLog().some((l) => l.includes('"app":"gateway"') && l.includes('/audience/search/email/:userEmail'))).toBe(true);
  }, 60000);
});

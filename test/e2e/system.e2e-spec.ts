import { join } from 'node:path';
import { APP_NAMES, APPS } from '@meld/contracts';
import { TcpProxy, testEnv, waitFor } from '@meld/testing';

// The operator's view: every app built and started as its own process (as `npm start`
// does), on the test databases, and the gateway's /healthz answering 200. Messaging binds a
// private SMSC simulator through a TCP proxy, which the last test cuts (ADR 0348).
 
const { startApps } = require(join(__dirname, '../../tools/cli/apps.js'));
const { startSmsc } = require(join(__dirname, '../../tools/smsc/simulator'));

const GATEWAY_PORT = 18080;
const OPS_PORT = GATEWAY_PORT + 100;
const offset = GATEWAY_PORT - APPS.gateway.port;

/** The user info of the SMSC URL is a credential: no health answer may show it. */
const SMSC_PASSWORD = 'e2e-smsc-secret';

describe('the whole system', () => {
  let supervisor: { ready(ms: number): Promise<void>; stop(): Promise<void> };
  let smsc: { port: number; close(): Promise<void> };
  let proxy: TcpProxy;

  beforeAll(async () => {
    testEnv();
    smsc = await startSmsc({ port: 0 });
    proxy = await TcpProxy.start(`smpp://127.0.0.1:${smsc.port}`);
    const env = { ...process.env, LOG_LEVEL: 'warn', MELD_OPS_PORT: String(OPS_PORT), MELD_SMSC_URL: `smpp://meld-e2e:${SMSC_PASSWORD}@127.0.0.1:${proxy.port}` };
    supervisor = startApps({ env, gatewayPort: GATEWAY_PORT, logDir: join(__dirname, '../../.stack/logs/e2e') });
    await supervisor.ready(90000);
  }, 120000);

  afterAll(async () => {
    await supervisor?.stop();
    await proxy?.stop();
    await smsc?.close();
  });

  it('answers 200 on the gateway /healthz with every app up: a bare status publicly, the details on the operations port', async () => {
    const res = await fetch(`http://127.0.0.1:${GATEWAY_PORT}/healthz`);
    expect([res.status, await res.json()]).toEqual([200, { status: 'ok' }]);
    const details = await fetch(`http://127.0.0.1:${OPS_PORT}/healthz`);
    const body = (await details.json()) as { status: string; apps: Record<string, { status: string }> };
    expect(details.status).toBe(200);
    expect(Object.keys(body.apps).sort()).toEqual([...APP_NAMES].sort());
    expect(Object.values(body.apps).every((a) => a.status === 'up')).toBe(true);
  });

  it.each(APP_NAMES)('%s serves /readyz naming its stores (messaging: and its SMSC session), /metrics and /livez (the gateway: on its operations port)', async (app) => {
    const base = `http://127.0.0.1:${APPS[app].port + offset}`;
    const ops = app === 'gateway' ? `http://127.0.0.1:${OPS_PORT}` : base;
    const ready = await fetch(`${ops}/readyz`);
    const body = (await ready.json()) as { status: string; details: Record<string, unknown> };
    expect(ready.status).toBe(200);
    if (app === 'gateway') expect(body).toEqual({ status: 'up' });
    else expect(Object.keys(body.details).sort()).toEqual([...APPS[app].stores, ...(app === 'messaging' ? ['smsc'] : [])].sort());
    const metrics = await (await fetch(`${ops}/metrics`)).text();
    expect(metrics).toContain('meld_http_request_duration_seconds');
    expect(metrics).toContain(`app="${app}"`);
    expect((await fetch(`${base}/livez`)).status).toBe(200);
  });

  it("keeps the gateway's public port to bare statuses: no /metrics, no store names or errors", async () => {
    const base = `http://127.0.0.1:${GATEWAY_PORT}`;
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${base}/livez`)).json()).toEqual({ status: 'ok' });
  });

  it('echoes a sane request id and makes one up otherwise', async () => {
    const given = await fetch(`http://127.0.0.1:${GATEWAY_PORT}/livez`, { headers: { 'x-request-id': 'req-123' } });
    expect(given.headers.get('x-request-id')).toBe('req-123');
    const made = await fetch(`http://127.0.0.1:${GATEWAY_PORT}/livez`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  // Last: it takes the SMSC away from the system the tests above share.
  it('turns the gateway /healthz 503 while messaging has had no SMSC session for the grace, naming it on the operations port, and 200 once it binds again', async () => {
    const healthz = async () => (await fetch(`http://127.0.0.1:${GATEWAY_PORT}/healthz`)).status;
    await proxy.stop();
    const report = await waitFor(
      'the system check failing on the SMSC',
      async () => {
        const res = await fetch(`http://127.0.0.1:${OPS_PORT}/healthz`);
        const text = await res.text();
        return res.status === 503 ? { text, body: JSON.parse(text) as { down: string[]; apps: Record<string, { status: string; details?: Record<string, { status: string; message: string }> }> } } : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(report.body.down).toEqual(['messaging']);
    expect(report.body.apps.messaging!.status).toBe('degraded');
    expect(Object.keys(report.body.apps.messaging!.details!)).toEqual(['smsc']);
    expect(report.body.apps.messaging!.details!.smsc!.message).toMatch(/^no SMPP session bound for \d+ s \(session error ECONNREFUSED\)/);
    expect(report.text).not.toContain(SMSC_PASSWORD);
    expect([await healthz(), await (await fetch(`http://127.0.0.1:${GATEWAY_PORT}/healthz`)).json()]).toEqual([503, { status: 'error' }]);
    // `all` keeps messaging ready (its API still stores and queues sends): degraded, not down.
    const messaging = await fetch(`http://127.0.0.1:${APPS.messaging.port + offset}/readyz`);
    expect([messaging.status, ((await messaging.json()) as { status: string }).status]).toEqual([200, 'degraded']);

    await proxy.resume();
    await waitFor('the gateway /healthz 200 again', async () => (await healthz()) === 200, { timeoutMs: 30_000, intervalMs: 500 });
  }, 90_000);
});

import { join } from 'node:path';
import { APP_NAMES, APPS } from '@meld/contracts';
import { testEnv } from '@meld/testing';

// The operator's view: every app built and started as its own process (as `npm start`
// does), on the test databases, and the gateway's /healthz answering 200.
 
const { startApps } = require(join(__dirname, '../../tools/cli/apps.js'));

const GATEWAY_PORT = 18080;
const OPS_PORT = GATEWAY_PORT + 100;
const offset = GATEWAY_PORT - APPS.gateway.port;

describe('the whole system', () => {
  let supervisor: { ready(ms: number): Promise<void>; stop(): Promise<void> };

  beforeAll(async () => {
    testEnv();
    supervisor = startApps({ env: { ...process.env, LOG_LEVEL: 'warn', MELD_OPS_PORT: String(OPS_PORT) }, gatewayPort: GATEWAY_PORT, logDir: join(__dirname, '../../.stack/logs/e2e') });
    await supervisor.ready(90000);
  }, 120000);

  afterAll(() => supervisor?.stop());

  it('answers 200 on the gateway /healthz with every app up: a bare status publicly, the details on the operations port', async () => {
    const res = await fetch(`http://127.0.0.1:${GATEWAY_PORT}/healthz`);
    expect([res.status, await res.json()]).toEqual([200, { status: 'ok' }]);
    const details = await fetch(`http://127.0.0.1:${OPS_PORT}/healthz`);
    const body = (await details.json()) as { status: string; apps: Record<string, { status: string }> };
    expect(details.status).toBe(200);
    expect(Object.keys(body.apps).sort()).toEqual([...APP_NAMES].sort());
    expect(Object.values(body.apps).every((a) => a.status === 'up')).toBe(true);
  });

  it.each(APP_NAMES)('%s serves /readyz naming its stores, /metrics and /livez (the gateway: on its operations port)', async (app) => {
    const base = `http://127.0.0.1:${APPS[app].port + offset}`;
    const ops = app === 'gateway' ? `http://127.0.0.1:${OPS_PORT}` : base;
    const ready = await fetch(`${ops}/readyz`);
    const body = (await ready.json()) as { status: string; details: Record<string, unknown> };
    expect(ready.status).toBe(200);
    if (app === 'gateway') expect(body).toEqual({ status: 'up' });
    else expect(Object.keys(body.details).sort()).toEqual([...APPS[app].stores].sort());
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
});

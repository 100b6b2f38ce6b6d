import { waitFor } from '@meld/testing';
import { OpsServer } from '../src/ops/ops-server';
import { startGateway } from './support/gateway';

// Issue 13 item 9: the public port answers bare statuses; metrics and the detailed reports
// (which app or store is down, with URLs and errors) are on the operations port (ADR 0105).
describe('gateway: public health is bare, details and metrics are on the operations port', () => {
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  let ops: string;

  beforeAll(async () => {
    // No internal app runs in this test: the system check is down, which is what shows details.
    gateway = await startGateway({ MELD_OPS_PORT: '0', MELD_AUDIENCE_URL: 'http://127.0.0.1:9' });
    ops = `http://127.0.0.1:${gateway.app.get(OpsServer).port()}`;
    // Postgres connects in the background: the gateway's own stores must be up before the reports are read.
    await waitFor('the gateway connected to its stores', async () => (await fetch(`${ops}/readyz`)).status === 200, { timeoutMs: 20000 });
  });
  afterAll(() => gateway?.close());

  it('public /healthz, /readyz, /livez carry a status and nothing else; /metrics is not there', async () => {
    const health = await fetch(`${gateway.url}/healthz`);
    expect([health.status, await health.json()]).toEqual([503, { status: 'error' }]);
    expect(await (await fetch(`${gateway.url}/livez`)).json()).toEqual({ status: 'ok' });
    const ready = (await (await fetch(`${gateway.url}/readyz`)).json()) as object;
    expect(Object.keys(ready)).toEqual(['status']);
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(404);
  });

  it('the operations port has the metrics and which app is down and why', async () => {
    const metrics = await fetch(`${ops}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(await metrics.text()).toContain('app="gateway"');
    const health = await fetch(`${ops}/healthz`);
    const body = (await health.json()) as { status: string; down: string[]; apps: Record<string, { status: string; error?: string }> };
    expect(health.status).toBe(503);
    expect(body.down).toContain('audience');
    expect(body.apps.audience).toEqual({ status: 'down', error: expect.stringContaining('unreachable') });
    expect(body.apps.gateway.status).toBe('up');
    expect((await fetch(`${ops}/readyz`)).status).toBe(200);
    expect((await fetch(`${ops}/v1/`)).status).toBe(404);
    expect((await fetch(`${ops}/metrics`, { method: 'POST' })).status).toBe(405);
  });
});

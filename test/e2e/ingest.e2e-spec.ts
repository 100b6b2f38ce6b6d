import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { testEnv } from '@meld/testing';

// The ingest writes through the gateway with a real data-source token: the eight apps as
// processes (as `npm start` runs them), tenants made through the operator API.
const { startApps } = require(join(__dirname, '../../tools/cli/apps.js'));

const GATEWAY_PORT = 48080;
const BASE = `http://127.0.0.1:${GATEWAY_PORT}`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function admin(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${BASE}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${process.env.MELD_ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} /admin/v1${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

describe('ingest writes through the gateway', () => {
  let supervisor: { ready(ms: number): Promise<void>; stop(): Promise<void> };
  let stream: string;
  let token: string;

  beforeAll(async () => {
    testEnv();
    if (!process.env.MELD_ADMIN_TOKEN) throw new Error('MELD_ADMIN_TOKEN is not set (npm test sets it)');
    supervisor = startApps({
      env: { ...process.env, LOG_LEVEL: 'warn', MELD_RATE_LIMIT_NAMESPACE: `ingest-e2e-${process.pid}` },
      gatewayPort: GATEWAY_PORT,
      logDir: join(__dirname, '../../.stack/logs/e2e-ingest'),
    });
    await supervisor.ready(90000);
    const org = (await admin('POST', '/organizations', { name: `ingest-${randomUUID().slice(0, 8)}`, plan: 'm' })).entity.id;
    const project = (await admin('POST', `/organizations/${org}/projects`, { name: 'Ingest e2e' })).entity.uid;
    await admin('POST', `/projects/${project}/event-types`, { uid: 'order_completed', name: 'Order completed', category: 'ecommerce' });
    const ds = await admin('POST', `/projects/${project}/datasources`, { name: 'Web' });
    stream = `${BASE}/v1/project/${project}/datasource/${ds.entity.id}/stream`;
    token = ds.metadata.token;
  }, 180000);

  afterAll(() => supervisor?.stop());

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${stream}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  };

  it('accepts a contact and its event with 202, rate-limit headers included', async () => {
    const contact = await post('/contacts', [{ _user_id: 'e2e-1', _email: 'e2e@example.com', _first_name: 'Ed' }]);
    expect(contact.status).toBe(202);
    expect(contact.body).toEqual({ entity: { successful: 1, failed: 0, items: [{ status: 'success', _user_id: 'e2e-1' }] } });
    expect(contact.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    const event = await post('/events', [{ _user_id: 'e2e-1', _event_id: `e2e-${randomUUID()}`, _event_type: 'order_completed' }]);
    expect(event).toMatchObject({ status: 202, body: { entity: { successful: 1, failed: 0 } } });
    const deleted = await fetch(`${stream}/contacts/e2e-1`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(deleted.status).toBe(202);
    expect(await deleted.json()).toEqual({ entity: { _user_id: 'e2e-1', deleted: true } });
  });

  it('answers 422 with per-item errors when every item fails, 400 for a body that is not an array', async () => {
    const res = await post('/contacts', [{ _email: 'no-id@example.com' }, { _user_id: 'e2e-2', _unknown_reserved: 1 }]);
    expect(res.status).toBe(422);
    expect(res.body.entity).toEqual({
      successful: 0,
      failed: 2,
      items: [
        { status: 'error', _user_id: null, errors: { _user_id: ['is required'] } },
        { status: 'error', _user_id: 'e2e-2', errors: { _unknown_reserved: ['unknown reserved attribute _unknown_reserved'] } },
      ],
    });
    const bad = await post('/events', { _user_id: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toEqual(expect.any(String));
  });
});

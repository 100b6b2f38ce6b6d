import { randomUUID } from 'node:crypto';
import { waitFor } from '@meld/testing';
import { adminApi, bearerApi } from './support/admin-api';
import { SHARED_BASE, sharedSystem } from './support/shared-system';

// Readiness through the gateway, driven as an operator and a data source would: every change
// (admin API, ingest delete, funds) is followed by a read at once, and the report must
// already show it (no cache anywhere on the path). The apps run as processes.
const BASE = SHARED_BASE;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const call = bearerApi(BASE);
const adminCall = adminApi(BASE);
const admin = (method: string, path: string, body?: unknown): Promise<Json> => adminCall(method, path, body);

describe('readiness through the gateway follows every change at once', () => {
  let p: { org: string; uid: string; sender: string; stream: string; dsToken: string; token: string };

  beforeAll(async () => {
    await sharedSystem();
    const tag = randomUUID().slice(0, 8);
    const org = (await admin('POST', '/organizations', { name: `readiness-${tag}`, plan: 'm', prepaid: true, funds: 2 })).entity.id;
    const uid = (await admin('POST', `/organizations/${org}/projects`, { name: `Readiness ${tag}` })).entity.uid;
    const sender = (await admin('POST', `/projects/${uid}/senders`, { channel: 'sms', alias: 'SHOP', name: 'Shop', status: 'active', countries: [{ country: 'GB', price: 0.04 }, { country: 'FR', effectiveStatus: 'pending', price: 0.05 }] })).entity.id;
    await admin('PUT', `/projects/${uid}/legal-profile`, { status: 'verified' });
    const ds = await admin('POST', `/projects/${uid}/datasources`, { name: 'Web' });
    // Project access alone reads readiness (ADR 0131): a token whose only scope no route needs.
    const token = (await admin('POST', `/organizations/${org}/tokens`, { scopes: ['PROJECT_CAMPAIGN_READ'], projects: [uid] })).metadata.token;
    p = { org, uid, sender, stream: `/v1/project/${uid}/datasource/${ds.entity.id}/stream`, dsToken: ds.metadata.token, token };
  }, 180000);

  const readiness = async (path = '') => {
    const res = await call('GET', `/v1/project/${p.uid}/readiness${path}`, p.token);
    expect([path, res.status]).toEqual([path, 200]);
    return res.body.entity;
  };
  const step = async (key: string) => (await readiness()).steps.find((s: Json) => s.key === key).completed;

  it('imports, then is operational; each change shows in the very next read', async () => {
    expect(await readiness()).toMatchObject({ scope: 'project', percent: 75, operational: true, reach: null });
    expect((await readiness()).warnings).toEqual([
      { key: 'sender_not_effective', severity: 'warning', count: 1, rows: [{ senderId: p.sender, senderName: 'Shop', country: 'FR', effectiveStatus: 'pending' }] },
      { key: 'no_default_sms_sender', severity: 'info', count: 1, rows: [{ senderId: p.sender, senderName: 'Shop', country: null, effectiveStatus: 'active' }] },
    ]);
    expect((await call('POST', `${p.stream}/contacts`, p.dsToken, [{ _user_id: 'ready-1', _first_name: 'Ready' }])).status).toBe(202);
    // The merge is asynchronous (Kafka → identity-merge); readiness reads its result.
    await waitFor('the contact merged into the audience', async () => (await step('import')) === true, { timeoutMs: 30000 });
    expect(await readiness()).toMatchObject({ percent: 100, operational: true });

    await admin('PATCH', `/projects/${p.uid}/senders/${p.sender}`, { status: 'inactive' });
    expect(await step('channels')).toBe(false);
    expect((await readiness('/channel/sms')).reach).toEqual({ reachableCountries: [], senders: {} });
    await admin('PATCH', `/projects/${p.uid}/senders/${p.sender}`, { status: 'active' });
    expect((await readiness('/channel/sms')).reach).toEqual({ reachableCountries: ['FR', 'GB'], senders: { SHOP: ['FR', 'GB'] } });

    await admin('PUT', `/projects/${p.uid}/legal-profile`, { status: 'pending' });
    expect(await readiness()).toMatchObject({ operational: false, percent: 75 });
    await admin('PUT', `/projects/${p.uid}/legal-profile`, { status: 'verified' });

    await admin('PATCH', `/organizations/${p.org}`, { funds: 0 });
    expect(await step('funds')).toBe(false);
    expect((await readiness('/channel/sms')).operational).toBe(false);
    await admin('PATCH', `/organizations/${p.org}`, { prepaid: false });
    expect((await readiness()).steps.find((s: Json) => s.key === 'funds')).toEqual({ key: 'funds', completed: false, isBlocker: false, disabled: true });

    expect((await call('DELETE', `${p.stream}/contacts/ready-1`, p.dsToken)).status).toBe(202);
    await waitFor('the last contact deleted from the audience', async () => (await step('import')) === false, { timeoutMs: 30000 });
  });

  it('a channel other than sms or rcs is 404; another project is 404; the document lists the routes and their keys', async () => {
    const email = await call('GET', `/v1/project/${p.uid}/readiness/channel/email`, p.token);
    expect([email.status, email.body.message]).toEqual([404, 'no readiness for channel "email": channels are sms, rcs']);
    expect((await call('GET', `/v1/project/not-${p.uid}/readiness`, p.token)).status).toBe(404);
    const doc = (await (await fetch(`${BASE}/v1/openapi.json`)).json()) as Json;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/project/{project}/readiness', '/v1/project/{project}/readiness/channel/{channel}']));
    const schemas = doc.components.schemas;
    expect(schemas.ReadinessStep.properties.key.enum).toEqual(['import', 'channels', 'legal_profile', 'add_sender', 'add_agent', 'funds']);
    expect(schemas.ReadinessWarning.properties.key.enum).toEqual(['sender_not_effective', 'default_sender_not_active', 'sender_reaches_no_country', 'no_default_sms_sender', 'sender_without_price']);
  });
});

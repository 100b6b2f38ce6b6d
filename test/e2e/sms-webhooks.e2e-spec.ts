import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@meld/testing';
import { Webhook } from 'standardwebhooks';
import { adminApi, bearerApi } from './support/admin-api';
import { SHARED_BASE, sharedSystem } from './support/shared-system';

// Direct SMS as a product team uses it, every app a process: the operator sets the webhook
// (Meld generates the secret), a data source imports the contact, the product sends through
// the gateway; an SMSC simulator answers (the shared e2e system, ADR 0352); the delivery reports arrive
// signed, verifiable with the standardwebhooks library and the generated secret as given; the
// list shows the message, the operator sees the deliveries, and the count finds the contact by
// its `_sms_delivered` event (ADRs 0155, 0157, 0159).
const BASE = SHARED_BASE;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const call = bearerApi(BASE);
const adminCall = adminApi(BASE);
const admin = (method: string, path: string, body?: unknown): Promise<Json> => adminCall(method, path, body);

describe('direct SMS through the gateway with delivery-report webhooks (every app a process, an SMSC simulator)', () => {
  const received: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  let receiver: Server;
  let p: { org: string; uid: string; token: string; secret: string };

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    await sharedSystem();
    const tag = randomUUID().slice(0, 8);
    const org = (await admin('POST', '/organizations', { name: `sms-${tag}`, plan: 'm' })).entity.id;
    const uid = (await admin('POST', `/organizations/${org}/projects`, { name: `SMS ${tag}`, locale: 'en_GB' })).entity.uid;
    const sender = (await admin('POST', `/projects/${uid}/senders`, { channel: 'sms', alias: 'SHOP', name: 'Shop', status: 'active', countries: [{ country: 'GB', price: 0.04 }] })).entity.id;
    await admin('PATCH', `/projects/${uid}`, { defaultSmsSender: sender });
    const hook = await admin('PUT', `/organizations/${org}/webhooks/sms-status`, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/meld` });
    const ds = await admin('POST', `/projects/${uid}/datasources`, { name: 'CRM' });
    const token = (await admin('POST', `/organizations/${org}/tokens`, { scopes: ['PROJECT_DIRECT_WRITE', 'PROJECT_DIRECT_READ', 'PROJECT_AUDIENCE_READ'], projects: [uid] })).metadata.token;
    const stream = `/v1/project/${uid}/datasource/${ds.entity.id}/stream`;
    expect((await call('POST', `${stream}/contacts`, ds.metadata.token, [{ _user_id: 'sms-1', _phone_mobile: '+447400123461' }])).status).toBe(202);
    await waitFor('the contact merged', async () => (await call('GET', `/v1/project/${uid}/audience/user/sms-1`, token)).status === 200 || undefined, { timeoutMs: 60000 });
    p = { org, uid, token, secret: hook.metadata.secret };
  }, 180000);

  afterAll(async () => {
    receiver?.closeAllConnections();
    await new Promise((r) => receiver?.close(r));
  });

  it('sends, reports every status change after enqueued signed, lists the message, shows the deliveries and counts the contact by _sms_delivered', async () => {
    const sent = await call('POST', `/v1/project/${p.uid}/channel/sms/sms/direct/default/${encodeURIComponent('+447400123461')}`, p.token, { text: 'Your order shipped' });
    expect(sent.status).toBe(201);
    const smsId = sent.body.entity.id;
    const reports = await waitFor('two reports', async () => {
      const mine = received.filter((r) => JSON.parse(r.body).id === smsId);
      return mine.length >= 2 ? mine : undefined;
    }, { timeoutMs: 30000 });
    const wh = new Webhook(p.secret);
    // The 201 answered `enqueued`; the webhook reports each later change, in order (ADR 0351).
    expect(reports.map((r) => (wh.verify(r.body, r.headers as Record<string, string>) as Json).status)).toEqual(['sent', 'delivered']);

    const list = await call('GET', `/v1/project/${p.uid}/channel/sms/sms?status_eq=delivered`, p.token);
    expect([list.status, list.body.entity.map((m: Json) => m.id)]).toEqual([200, [smsId]]);

    // Each report was delivered at its first attempt: the operator's list holds only what is owed or failed (ADR 0323).
    expect((await admin('GET', `/organizations/${p.org}/webhook-deliveries`)).entity).toEqual([]);

    const root = { type: 'group_event', eventType: '_sms_delivered', children: [] };
    await waitFor('the _sms_delivered event counted', async () => {
      const res = await call('POST', `/v1/project/${p.uid}/audience/count`, p.token, { root });
      return res.status === 200 && res.body.metadata.totalHits === 1 ? true : undefined;
    }, { timeoutMs: 60000 });
  }, 120000);
});

import { randomUUID } from 'node:crypto';
import { waitFor } from '@meld/testing';
import { adminApi } from './admin-api';
import { sharedSystem } from './shared-system';

// The SMS e2e tests' world: the eight apps as processes bound to an SMSC simulator with its
// control port (mobile-originated messages), and a project that can send: an active sender for
// GB, a data source, and a product token that may read PII.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;
export interface Answer {
  status: number;
  body: Json;
}

/** The shared e2e system (ADR 0352) as the SMS tests use it: its gateway, its database, and mobile-originated messages through its simulator. */
export async function smsStack() {
  const system = await sharedSystem();
  /** A mobile-originated SMS through the simulator's control port; the bound sessions' answers. */
  const mo = async (message: { from: string; to: string; text: string }): Promise<number[]> => {
    const res = await fetch(`${system.controlUrl}/mo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) });
    return ((await res.json()) as { sessions: number[] }).sessions;
  };
  return { base: system.base, postgresUrl: system.postgresUrl, mo };
}

/** A project of a fresh organization with an active SMS sender for GB (a unique alias: MO messages find projects by it). */
export async function seedSmsProject(base: string) {
  const admin = adminApi(base);
  const tag = randomUUID().slice(0, 8);
  const org = (await admin('POST', '/organizations', { name: `sms-${tag}`, plan: 'm' })).entity.id;
  const uid = (await admin('POST', `/organizations/${org}/projects`, { name: `SMS ${tag}` })).entity.uid!;
  const alias = `S${tag}`.toUpperCase();
  const sender = (await admin('POST', `/projects/${uid}/senders`, { channel: 'sms', alias, name: 'Corner Shop', status: 'active', countries: [{ country: 'GB', price: 0.04 }] })).entity.id;
  const ds = await admin('POST', `/projects/${uid}/datasources`, { name: 'CRM' });
  const scopes = ['PROJECT_DIRECT_WRITE', 'PROJECT_DIRECT_READ', 'PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_FULL'];
  const token = (await admin('POST', `/organizations/${org}/tokens`, { scopes, projects: [uid] })).metadata!.token!;
  const dsToken = ds.metadata!.token!;

  const call = async (method: string, path: string, bearer: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const v1 = `/v1/project/${uid}`;
  const project = {
    uid,
    alias,
    admin,
    send: (target: string, text: string) => call('POST', `${v1}/channel/sms/sms/direct/${sender}/${encodeURIComponent(target)}`, token, { text }),
    readSms: (id: string) => call('GET', `${v1}/channel/sms/sms/${id}`, token),
    searchPhone: (phone: string) => call('GET', `${v1}/audience/search/phone/${encodeURIComponent(phone)}`, token),
    /** Writes contacts as the project's CRM data source (202 once committed). */
    ingest: (contacts: Json[]) => call('POST', `${v1}/datasource/${ds.entity.id}/stream/contacts`, dsToken, contacts),
    /** Deletes a contact of the CRM data source (202). */
    remove: (userId: string) => call('DELETE', `${v1}/datasource/${ds.entity.id}/stream/contacts/${encodeURIComponent(userId)}`, dsToken),
    /** A contact of the CRM with this mobile, once merged into the audience; its audience id. */
    async contact(userId: string, phone: string): Promise<string> {
      expect((await project.ingest([{ _user_id: userId, _phone_mobile: phone }])).status).toBe(202);
      let id = '';
      await waitFor(`${userId} merged into the audience`, async () => {
        const found = await project.searchPhone(phone);
        id = found.status === 200 ? found.body.entity.id : '';
        return id !== '';
      }, { timeoutMs: 30000 });
      return id;
    },
    /** Waits until the audience contact of this phone has `_consent_sms` = status (identity-merge applied it). */
    async consentBecomes(phone: string, status: 'opt-out' | 'opt-in') {
      await waitFor(`the consent of the contact is ${status}`, async () => (await project.searchPhone(phone)).body?.entity?._consent_sms === status, { timeoutMs: 30000 });
    },
  };
  return project;
}

export type SmsProject = Awaited<ReturnType<typeof seedSmsProject>>;

/** The unsubscribe link of a stored message, as sent (GET …/sms/{id} with a token that reads PII). */
export async function unsubscribeLink(project: SmsProject, smsId: string): Promise<string> {
  const read = await project.readSms(smsId);
  expect(read.status).toBe(200);
  const link = /https?:\/\/\S+\/u\/[0-9A-Za-z]{22}/.exec(read.body.entity.text ?? '')?.[0];
  if (!link) throw new Error(`no unsubscribe link in the stored text: ${JSON.stringify(read.body.entity.text)}`);
  return link;
}

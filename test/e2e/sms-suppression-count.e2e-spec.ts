import { randomUUID } from 'node:crypto';
import { MESSAGING_CONNECTOR, createDataSource, upsertSourceContacts } from '@meld/db';
import { waitFor } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { adminApi, bearerApi } from './support/admin-api';
import { sharedSystem } from './support/shared-system';

// SMS suppression on the audience side end to end (ADRs 0053, 0361), on the shared e2e system
// (ADR 0352): contacts written through ingest, messaging's own source contact of one of them
// saying `_suppressed_sms: true` (written as the messaging app writes it: upsertSourceContacts on
// the project's `meld-messaging` data source, with its outbox row), merged by identity-merge into
// the contact, stored by the probes sink; the audience count's compliance filters then exclude
// it and its breakdown counts it as suppressed. Lifted (null), it is counted again. The operator's
// admin API (PUT / DELETE …/suppressions/sms/{phone}) writes the same copy.
describe('SMS suppression in the audience count', () => {
  let base: string;
  let db: DataSource;
  let uid: string;
  let token: string;
  let crm: { id: string; token: string };
  const call = (method: string, path: string, bearer: string, body?: unknown) => bearerApi(base)(method, path, bearer, body);

  beforeAll(async () => {
    const system = await sharedSystem();
    base = system.base;
    db = await createDataSource({ url: system.postgresUrl, applicationName: 'sms-suppression-count-e2e', poolSize: 2 }).initialize();
    const admin = adminApi(base);
    const tag = randomUUID().slice(0, 8);
    const org = (await admin('POST', '/organizations', { name: `suppression-${tag}`, plan: 'm' })).entity.id;
    uid = (await admin('POST', `/organizations/${org}/projects`, { name: `Suppression ${tag}` })).entity.uid!;
    const ds = await admin('POST', `/projects/${uid}/datasources`, { name: 'CRM' });
    crm = { id: ds.entity.id, token: ds.metadata!.token! };
    token = (await admin('POST', `/organizations/${org}/tokens`, { scopes: ['PROJECT_AUDIENCE_READ'], projects: [uid] })).metadata!.token!;
  }, 240000);

  afterAll(async () => {
    await db?.destroy();
  });

  /** The count's sms figures under `mode`, with totalHits. */
  const sms = async (mode: string) => {
    const res = await call('POST', `/v1/project/${uid}/audience/count`, token, { filterCompliance: { sms: mode } });
    expect(res.status).toBe(200);
    const { totalHits, compliance } = res.body.metadata;
    return { totalHits, ...compliance.sms };
  };

  /** Writes `_suppressed_sms` on messaging's source contact standing for the CRM contact `userId`, as MessagingContacts does. */
  async function suppress(projectId: string, userId: string, value: true | null) {
    await db.transaction(async (em) => {
      await em.query(`INSERT INTO data_sources (project_id, uid, name, connector) VALUES ($1, 'meld-messaging', 'Meld messaging', $2) ON CONFLICT (project_id, uid) DO NOTHING`, [projectId, MESSAGING_CONNECTOR]);
      const [{ id }] = await em.query(`SELECT id FROM data_sources WHERE project_id = $1 AND uid = 'meld-messaging'`, [projectId]);
      await upsertSourceContacts(em, projectId, id, [{ userId, patch: { _suppressed_sms: value } }]);
    });
  }

  it('excludes a suppressed contact from basic, opt-out and opt-in and counts it as suppressed; lifted, it is counted again', async () => {
    const written = await call('POST', `/v1/project/${uid}/datasource/${crm.id}/stream/contacts`, crm.token, [
      { _user_id: 'sup-1', _phone_mobile: '+447400555301', _consent_sms: 'opt-in' },
      { _user_id: 'sup-2', _phone_mobile: '+447400555302', _consent_sms: 'opt-in' },
      { _user_id: 'sup-3', _phone_mobile: '+447400555303' },
      { _user_id: 'sup-4' },
    ]);
    expect(written).toMatchObject({ status: 202, body: { entity: { successful: 4 } } });
    const before = { optedIn: 2, optedOut: 0, noConsent: 1, suppressed: 0, noValidAddress: 1 };
    await waitFor('the four contacts counted', async () => (await sms('basic')).totalHits === 3 && (await sms('basic')).noValidAddress === 1, { timeoutMs: 60000 });
    expect(await sms('opt-in')).toEqual({ totalHits: 2, mode: 'opt-in', reachable: 2, ...before });

    const [{ id: projectId }] = await db.query(`SELECT id FROM projects WHERE uid = $1`, [uid]);
    await suppress(projectId, 'sup-1', true);
    const suppressed = { optedIn: 1, optedOut: 0, noConsent: 1, suppressed: 1, noValidAddress: 1 };
    await waitFor('the suppression in the count', async () => (await sms('basic')).suppressed === 1, { timeoutMs: 60000 });
    expect(await sms('basic')).toEqual({ totalHits: 2, mode: 'basic', reachable: 2, ...suppressed });
    expect(await sms('opt-out')).toEqual({ totalHits: 2, mode: 'opt-out', reachable: 2, ...suppressed });
    expect(await sms('opt-in')).toEqual({ totalHits: 1, mode: 'opt-in', reachable: 1, ...suppressed });
    // Merged into the CRM contact, not a contact of its own.
    expect((await call('POST', `/v1/project/${uid}/audience/count`, token, {})).body.metadata.totalHits).toBe(4);

    await suppress(projectId, 'sup-1', null);
    await waitFor('the suppression lifted in the count', async () => (await sms('basic')).suppressed === 0, { timeoutMs: 60000 });
    expect(await sms('opt-in')).toEqual({ totalHits: 2, mode: 'opt-in', reachable: 2, ...before });
  }, 240000);

  it('an operator’s suppression through the admin API reaches the count the same way, and its lift too', async () => {
    const admin = adminApi(base);
    const phone = encodeURIComponent('+447400555302');
    await admin('PUT', `/projects/${uid}/suppressions/sms/${phone}`);
    await waitFor('the suppression in the count', async () => (await sms('basic')).suppressed === 1, { timeoutMs: 60000 });
    expect(await sms('opt-in')).toEqual({ totalHits: 1, mode: 'opt-in', reachable: 1, optedIn: 1, optedOut: 0, noConsent: 1, suppressed: 1, noValidAddress: 1 });
    await admin('DELETE', `/projects/${uid}/suppressions/sms/${phone}`);
    await waitFor('the suppression lifted in the count', async () => (await sms('basic')).suppressed === 0, { timeoutMs: 60000 });
    expect(await sms('opt-in')).toMatchObject({ totalHits: 2, reachable: 2, suppressed: 0 });
  }, 240000);
});

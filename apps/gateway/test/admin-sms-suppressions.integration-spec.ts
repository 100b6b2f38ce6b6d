import { randomUUID } from 'node:crypto';
import { Topics } from '@meld/contracts';
import { DATA_SOURCE, messagingDataSourceId, type SqlRunner, suppressSms, upsertSourceContacts } from '@meld/db';
import { collectTopic } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import type { DataSource } from 'typeorm';
import { type AdminGateway, type Json, startAdminGateway } from './admin-support/admin-gateway';
import { createOrganization, createProject, fieldsOf } from './admin-support/fixtures';

// The operator's SMS suppression list (ADR 0361): the list in Postgres, its published copy `_suppressed_sms` on messaging's source contact.
describe('admin: SMS suppressions (list, add, lift)', () => {
  let gw: AdminGateway;
  let db: DataSource;
  let project: { id: string; uid: string };
  let contacts: Awaited<ReturnType<typeof collectTopic>>;
  let events: Awaited<ReturnType<typeof collectTopic>>;

  beforeAll(async () => {
    gw = await startAdminGateway();
    db = gw.app.get(DATA_SOURCE);
    project = await createProject(gw, await createOrganization(gw));
    await db.query(`UPDATE projects SET locale = 'en_GB' WHERE id = $1`, [project.id]);
    contacts = await collectTopic(Topics.contacts, (v) => v.projectId === project.id);
    events = await collectTopic(Topics.events, (v) => v.projectId === project.id);
  });
  afterAll(async () => {
    await contacts?.stop();
    await events?.stop();
    await gw?.close();
  });

  const path = (phone: string) => `/projects/${project.uid}/suppressions/sms/${encodeURIComponent(phone)}`;
  const messagingSource = async (userId: string) =>
    (await db.query(
      `SELECT s.attributes FROM source_contacts s JOIN data_sources d ON d.id = s.data_source_id WHERE d.project_id = $1 AND d.uid = 'meld-messaging' AND s.user_id = $2`,
      [project.id, userId],
    ))[0]?.attributes;
  /**
   * A message of `topic` the write queued for `userId`: in `outbox` still, or on Kafka once an
   * ingest or messaging relay of the stack published it.
   */
  const published = (topic: string, userId: string, where: (value: Json) => boolean) =>
    waitFor(`${topic} message of ${userId}`, async () => {
      const queued: Array<{ value: Json }> = await db.query(`SELECT value FROM outbox WHERE topic = $1 AND value->>'projectId' = $2 AND value->>'userId' = $3`, [topic, project.id, userId]);
      const sent = (topic === Topics.contacts ? contacts : events).messages.map((m) => ({ value: m.value }));
      return [...queued, ...sent].find((m) => m.value.userId === userId && where(m.value));
    }, { timeoutMs: 20_000 });

  /** Messaging's own contact of a number, as an outbound auto-creation writes it (ADR 0184). */
  const ownContactOf = (phone: string) =>
    db.transaction(async (tx) => upsertSourceContacts(tx, project.id, await messagingDataSourceId(tx, project.id), [{ userId: phone, patch: { _phone_mobile: phone } }]));
  const outboxRowsOf = async (userId: string) =>
    (await db.query(`SELECT 1 FROM outbox WHERE value->>'projectId' = $1 AND value->>'userId' = $2`, [project.id, userId])).length;

  it('adds a number (E.164 or national), idempotently; its own messaging contact carries _suppressed_sms, published', async () => {
    await ownContactOf('+447400123498');
    const res = await gw.call('PUT', path('+447400123498'));
    expect([res.status, res.body]).toEqual([200, {
      entity: { phone: '+447400123498', reason: 'manual', detail: null, createdAt: expect.stringMatching(/\+00:00$/), createdBy: 'admin' },
      metadata: { created: true },
    }]);
    expect(await messagingSource('+447400123498')).toEqual({ _phone_mobile: '+447400123498', _suppressed_sms: true });
    await published(Topics.contacts, '+447400123498', (v) => v.patch?._suppressed_sms === true);
    await published(Topics.events, '+447400123498', (v) => v.eventType === '_sms_suppressed' && v.parameters?.reason === 'manual');

    const again = await gw.call('PUT', path('07400 123498'));
    expect([again.status, again.body.entity.phone, again.body.metadata]).toEqual([200, '+447400123498', { created: false }]);
  });

  it('adds a number no contact holds without creating one: an imported do-not-contact list adds nobody to the audience (ADR 0361)', async () => {
    const phone = '+447400123496';
    const res = await gw.call('PUT', path(phone));
    expect([res.status, res.body.metadata]).toEqual([200, { created: true }]);
    expect(await messagingSource(phone)).toBeUndefined();
    expect(await outboxRowsOf(phone)).toBe(0);
    expect((await gw.call('DELETE', path(phone))).status).toBe(200);
    expect(await messagingSource(phone)).toBeUndefined();
    expect(await outboxRowsOf(phone)).toBe(0);
  });

  it('writes the copy on the source contact standing for the audience contact of the number', async () => {
    const phone = '+447400123497';
    const [crm] = await db.query(`INSERT INTO data_sources (project_id, uid, name) VALUES ($1, $2, 'CRM') RETURNING id`, [project.id, `crm-${randomUUID()}`]);
    const audienceId = randomUUID();
    await db.query(`INSERT INTO audience_contacts (project_id, id, attributes) VALUES ($1, $2, $3)`, [project.id, audienceId, JSON.stringify({ _user_id: 'crm-1', _phone_mobile: phone })]);
    await db.query(`INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, version) VALUES ($1, $2, 'crm-1', '{}', 1)`, [project.id, crm.id]);
    await db.query(`INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id) VALUES ($1, $2, 'crm-1', $3)`, [project.id, crm.id, audienceId]);
    expect((await gw.call('PUT', path(phone))).status).toBe(200);
    expect(await messagingSource('crm-1')).toEqual({ _suppressed_sms: true });
    expect(await messagingSource(phone)).toBeUndefined();

    const lifted = await gw.call('DELETE', path(phone));
    expect([lifted.status, lifted.body.entity.phone]).toEqual([200, phone]);
    expect(await messagingSource('crm-1')).toEqual({});
    await published(Topics.contacts, 'crm-1', (v) => Object.hasOwn(v.patch, '_suppressed_sms') && v.patch._suppressed_sms === null);
  });

  it('lists in phone order, by phone, a page at a time', async () => {
    for (const phone of ['+447400123481', '+447400123482', '+447400123483']) expect((await gw.call('PUT', path(phone))).status).toBe(200);
    const all = await gw.call('GET', `/projects/${project.uid}/suppressions/sms`);
    const phones = all.body.entity.map((s: Json) => s.phone);
    expect(phones).toEqual([...phones].sort());
    expect(phones).toEqual(expect.arrayContaining(['+447400123481', '+447400123482', '+447400123483']));
    const page1 = await gw.call('GET', `/projects/${project.uid}/suppressions/sms?limit=1&cursor=${encodeURIComponent('+447400123480')}`);
    expect([page1.body.entity.map((s: Json) => s.phone), page1.body.metadata]).toEqual([['+447400123481'], { count: 1, nextCursor: '+447400123481' }]);
    const page2 = await gw.call('GET', `/projects/${project.uid}/suppressions/sms?limit=1&cursor=${encodeURIComponent(page1.body.metadata.nextCursor)}`);
    expect(page2.body.entity.map((s: Json) => s.phone)).toEqual(['+447400123482']);
    const one = await gw.call('GET', `/projects/${project.uid}/suppressions/sms?phone=${encodeURIComponent('07400 123483')}`);
    expect(one.body.entity.map((s: Json) => s.phone)).toEqual(['+447400123483']);
  });

  it('lifts a suppression: the row goes, _suppressed_sms is cleared (null published), _sms_unsuppressed on the timeline; 404 when none', async () => {
    const phone = '+447400123470';
    await ownContactOf(phone);
    expect((await gw.call('PUT', path(phone))).status).toBe(200);
    const res = await gw.call('DELETE', path(phone));
    expect([res.status, res.body.entity]).toEqual([200, expect.objectContaining({ phone, reason: 'manual' })]);
    expect((await db.query(`SELECT 1 FROM sms_suppressions WHERE project_id = $1 AND phone = $2`, [project.id, phone])).length).toBe(0);
    expect(await messagingSource(phone)).toEqual({ _phone_mobile: phone });
    await published(Topics.contacts, phone, (v) => Object.hasOwn(v.patch, '_suppressed_sms') && v.patch._suppressed_sms === null);
    await published(Topics.events, phone, (v) => v.eventType === '_sms_unsuppressed');
    const again = await gw.call('DELETE', path(phone));
    expect([again.status, again.body.message]).toEqual([404, 'this number is not suppressed']);
  });

  it('a number lifted while a PUT of it is between its statements: the PUT answers the suppression it leaves, and the list and the copy agree', async () => {
    const phone = '+447400123460';
    await ownContactOf(phone);
    expect((await gw.call('PUT', path(phone))).status).toBe(200);
    // A second PUT in its transaction: the DELETE lifts the number between its INSERT (which found the row) and what follows.
    let lifted: Promise<{ status: number }> | undefined;
    const again = await db.transaction((em) => {
      const paused: SqlRunner = {
        query: async (text: string, values?: unknown[]) => {
          const rows = await em.query(text, values);
          if (!lifted && text.includes('INSERT INTO sms_suppressions')) {
            lifted = gw.call('DELETE', path(phone));
            await lifted;
          }
          return rows;
        },
      };
      return suppressSms(paused, project.id, { phone, reason: 'manual', detail: null, createdBy: 'admin' });
    });
    expect((await lifted!).status).toBe(200);
    expect(again.suppression).toMatchObject({ phone, reason: 'manual' });
    const listed = (await db.query(`SELECT 1 FROM sms_suppressions WHERE project_id = $1 AND phone = $2`, [project.id, phone])).length === 1;
    expect([listed, (await messagingSource(phone))?._suppressed_sms === true]).toEqual([true, true]);
  });

  it('400 names the phone (without echoing it) for hostile or invalid numbers; 404 for an unknown project; 401 without the admin token', async () => {
    for (const phone of ['constructor', '__proto__', '\u0000', '+44\u0000 7400 123499', 'x'.repeat(90), '1'.repeat(70), '+447400123498'.repeat(4)]) {
      for (const method of ['PUT', 'DELETE']) {
        const res = await gw.call(method, path(phone));
        expect([JSON.stringify(phone), method, res.status, fieldsOf(res.body)]).toEqual([JSON.stringify(phone), method, 400, [['phone', 'not a valid phone number (E.164, or national in the project locale)']]]);
      }
    }
    // Past the router's longest path segment: the gateway's 414 saying so, as on every route (no handler runs).
    const huge = await gw.call('PUT', path('9'.repeat(5000)));
    expect([huge.status, huge.body.message]).toEqual([414, expect.stringContaining('a path parameter is longer than')]);
    const bad = await gw.call('GET', `/projects/${project.uid}/suppressions/sms?phone=constructor&limit=0&cursor=x`);
    expect([bad.status, fieldsOf(bad.body).map(([p]) => p)]).toEqual([400, ['limit', 'cursor']]);
    expect(fieldsOf((await gw.call('GET', `/projects/${project.uid}/suppressions/sms?phone=constructor`)).body)).toEqual([['phone', 'not a valid phone number (E.164, or national in the project locale)']]);
    expect((await gw.call('PUT', `/projects/no-such-project/suppressions/sms/${encodeURIComponent('+447400123498')}`)).status).toBe(404);
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const url = method === 'GET' ? `/projects/${project.uid}/suppressions/sms` : path('+447400123466');
      expect((await gw.call(method, url, undefined, null)).status).toBe(401);
      expect((await gw.call(method, url, undefined, 'meld-test-admin-but-wrong')).status).toBe(401);
    }
    expect((await db.query(`SELECT 1 FROM sms_suppressions WHERE project_id = $1 AND phone = '+447400123466'`, [project.id])).length).toBe(0);
  });
});

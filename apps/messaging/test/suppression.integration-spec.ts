import { randomUUID } from 'node:crypto';
import { Topics } from '@meld/contracts';
import { liftSmsSuppression, suppressSms } from '@meld/db';
import { type Json, collectTopic, principalHeader } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { SendQueue } from '../src/sms/delivery/send-queue';
import { type Smsc, type Tenancy, seedContact, seedSmsTenancy, startMessaging } from './app.fixture';

type SmsTenancy = Tenancy & { sender: { id: string } };

// ADR 0361: the simulator answers a destination ending in 98 with ESME_RINVDSTADR (invalid destination), one ending in 99 with ESME_RSUBMITFAIL.
describe('SMS suppression, messaging side (real Postgres, Redis, Kafka, SMSC simulator)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let smsc: Smsc;
  let t: SmsTenancy;
  let contacts: Awaited<ReturnType<typeof collectTopic>>;
  let events: Awaited<ReturnType<typeof collectTopic>>;

  beforeAll(async () => {
    ({ app, base, db, smsc } = await startMessaging());
    t = await seedSmsTenancy(db, { prepaid: true, funds: 10 });
    contacts = await collectTopic(Topics.contacts, (v) => v.projectId === t.project.id);
    events = await collectTopic(Topics.events, (v) => v.projectId === t.project.id);
  });
  afterAll(async () => {
    await contacts?.stop();
    await events?.stop();
    await app?.close();
    await smsc?.close();
  });

  const send = async (target: string) => {
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${encodeURIComponent(target)}`;
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Your code is 4821' }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const finalStatus = (id: string) =>
    waitFor(`final status of ${id}`, async () => {
      const [row] = await db.query(`SELECT status, error FROM sms_messages WHERE id = $1`, [id]);
      return row && row.status !== 'enqueued' && row.status !== 'sent' ? row : undefined;
    }, { timeoutMs: 10_000 });
  const suppressionOf = async (phone: string) => (await db.query(`SELECT reason, detail, created_by FROM sms_suppressions WHERE project_id = $1 AND phone = $2`, [t.project.id, phone]))[0];
  const storedTo = async (phone: string) => Number((await db.query(`SELECT count(*) FROM sms_messages WHERE project_id = $1 AND destination = $2`, [t.project.id, phone]))[0].count);
  const funds = async () => (await db.query(`SELECT funds::text FROM organizations WHERE id = $1`, [t.organization.id]))[0].funds;
  const messagingSource = async (userId: string) =>
    (await db.query(
      `SELECT s.attributes FROM source_contacts s JOIN data_sources d ON d.id = s.data_source_id WHERE d.project_id = $1 AND d.uid = 'meld-messaging' AND s.user_id = $2`,
      [t.project.id, userId],
    ))[0]?.attributes;

  it('an invalid destination (ESME_RINVDSTADR) fails and suppresses the number: the next send is 422 suppressed, nothing stored or charged', async () => {
    const phone = '+447400123498';
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-invalid', _phone_mobile: phone });
    const first = await send(phone);
    expect(first.status).toBe(201);
    expect(await finalStatus(first.body.entity.id)).toEqual({ status: 'failed', error: 'SMSC refused the message (command_status 0xb)' });
    expect(await suppressionOf(phone)).toEqual({ reason: 'invalid_destination', detail: 'ESME_RINVDSTADR (0x0b)', created_by: 'automatic' });
    // The contact has no source contact behind it: our own contact of the number carries the published copy (ADR 0361).
    expect(await messagingSource(phone)).toEqual({ _phone_mobile: phone, _suppressed_sms: true });
    await contacts.waitFor(1, (m) => m.value.userId === phone && m.value.patch?._suppressed_sms === true);
    await events.waitFor(1, (m) => m.value.userId === phone && m.value.eventType === '_sms_suppressed' && m.value.parameters?.reason === 'invalid_destination');

    const before = await funds();
    for (const target of [phone, audienceId]) {
      const again = await send(target);
      expect([again.status, again.body.details]).toEqual([422, { reason: 'suppressed' }]);
    }
    expect(await storedTo(phone)).toBe(1);
    expect(await funds()).toBe(before);
  });

  it('suppression is answered before consent and funds', async () => {
    const phone = '+447400123598';
    await seedContact(db, t.project.id, { _user_id: 'u-opted-out', _phone_mobile: phone, _consent_sms: 'opt-out' });
    await db.query(`INSERT INTO sms_suppressions (project_id, phone, reason, created_by) VALUES ($1, $2, 'manual', 'admin')`, [t.project.id, phone]);
    expect((await send(phone)).body.details).toEqual({ reason: 'suppressed' });
  });

  it('a number suppressed and lifted as the admin API does it (the same @meld/db writes) is refused, then sent', async () => {
    const phone = '+447400123571';
    await seedContact(db, t.project.id, { _user_id: 'u-manual', _phone_mobile: phone });
    await db.transaction((em) => suppressSms(em, t.project.id, { phone, reason: 'manual', detail: null, createdBy: 'admin' }));
    expect((await send(phone)).body.details).toEqual({ reason: 'suppressed' });
    expect(await db.transaction((em) => liftSmsSuppression(em, t.project.id, phone))).toMatchObject({ phone, reason: 'manual' });
    const sent = await send(phone);
    expect(sent.status).toBe(201);
    expect((await finalStatus(sent.body.entity.id)).status).toBe('delivered');
  });

  it('a refusal that is not about the destination (ESME_RSUBMITFAIL) fails without suppressing', async () => {
    const phone = '+447400123499';
    await seedContact(db, t.project.id, { _user_id: 'u-refused', _phone_mobile: phone });
    const first = await send(phone);
    expect((await finalStatus(first.body.entity.id)).status).toBe('failed');
    expect(await suppressionOf(phone)).toBeUndefined();
    expect((await send(phone)).status).toBe(201);
  });

  it("writes the copy on the source contact standing for the message's audience contact", async () => {
    const phone = '+447400124498';
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-member', _phone_mobile: phone });
    const userId = `crm-${randomUUID()}`;
    await db.query(`INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, version) VALUES ($1, $2, $3, '{}', 1)`, [t.project.id, t.dataSource.id, userId]);
    await db.query(`INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id) VALUES ($1, $2, $3, $4)`, [t.project.id, t.dataSource.id, userId, audienceId]);
    const first = await send(audienceId);
    expect((await finalStatus(first.body.entity.id)).status).toBe('failed');
    expect(await messagingSource(userId)).toEqual({ _suppressed_sms: true });
    expect(await messagingSource(phone)).toBeUndefined();
  });

  it('a suppression that cannot be written loses only itself: the message is recorded failed once, not submitted again', async () => {
    const phone = '+447400129998';
    await seedContact(db, t.project.id, { _user_id: 'u-unwritable', _phone_mobile: phone });
    // This number's row cannot be written (a stand-in for a deadlock or a store error in the suppression's statements).
    await db.query(`CREATE OR REPLACE FUNCTION meld_test_refuse_suppression() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.phone = '${phone}' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await db.query(`CREATE OR REPLACE TRIGGER meld_test_refuse_suppression BEFORE INSERT ON sms_suppressions FOR EACH ROW EXECUTE FUNCTION meld_test_refuse_suppression()`);
    try {
      const refusedBefore = smsc.stats().failed;
      const first = await send(phone);
      expect(first.status).toBe(201);
      expect(await finalStatus(first.body.entity.id)).toEqual({ status: 'failed', error: 'SMSC refused the message (command_status 0xb)' });
      // A failed batch would be retried by its job (after 1 s): the SMSC would see the message again.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(smsc.stats().failed - refusedBefore).toBe(1);
      expect(await suppressionOf(phone)).toBeUndefined();
    } finally {
      await db.query(`DROP TRIGGER IF EXISTS meld_test_refuse_suppression ON sms_suppressions`);
      await db.query(`DROP FUNCTION IF EXISTS meld_test_refuse_suppression()`);
    }
  });

  it('a message already queued when its number is suppressed ends rejected with error suppressed', async () => {
    const phone = '+447400123477';
    const smsId = randomUUID();
    await db.query(
      `INSERT INTO sms_messages (id, project_id, organization_id, sender_id, destination, country, text, encoding, messages_count, price_per_sms)
       VALUES ($1, $2, $3, $4, $5, 'GB', 'hi', 'GSM-7', 1, 0.04)`,
      [smsId, t.project.id, t.organization.id, t.sender.id, phone],
    );
    await db.query(`INSERT INTO sms_suppressions (project_id, phone, reason, created_by) VALUES ($1, $2, 'manual', 'admin')`, [t.project.id, phone]);
    const submitted = smsc.stats().submitted + smsc.stats().failed;
    await app.get(SendQueue).addMany([{ id: randomUUID(), messages: [{ smsId }] }]);
    expect(await finalStatus(smsId)).toEqual({ status: 'rejected', error: 'suppressed' });
    expect(smsc.stats().submitted + smsc.stats().failed).toBe(submitted);
  });
});

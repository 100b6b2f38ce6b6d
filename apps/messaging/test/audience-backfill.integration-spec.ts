import { Topics, keys, type AudienceChange } from '@meld/contracts';
import { type Json, principalHeader } from '@meld/fixtures';
import { createProducer, type Producer } from '@meld/kafka';
import { testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AudienceConsumer } from '../src/audience/audience.consumer';
import { SmsAudienceBackfill } from '../src/audience/sms-audience-backfill';
import { MessagingContacts } from '../src/contacts/messaging-contacts';
import { type Smsc, type Tenancy, seedContact, seedSmsTenancy, startMessaging } from './app.fixture';

type SmsTenancy = Tenancy & { sender: { id: string } };

// A send to an unknown number auto-creates its contact and waits 3 s for the merge (ADR 0184); no
// identity-merge runs here, so every such send stores its message without audience id. The
// snapshot that names the merged `meld-messaging` member gives the message its id (ADRs 0184, 0358).
describe('messaging: a message sent to an auto-created contact gets its audience id once the merge lands', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let smsc: Smsc;
  let t: SmsTenancy;
  let producer: Producer;
  let messaging: string;

  beforeAll(async () => {
    ({ app, base, db, smsc } = await startMessaging());
    t = await seedSmsTenancy(db);
    await db.query(`UPDATE projects SET general_config = jsonb_set(COALESCE(general_config, '{}'), '{channelSms}', '{"autoCreateContactsOnOutbounds": true}') WHERE id = $1`, [t.project.id]);
    messaging = await app.get(MessagingContacts).dataSourceId(db.manager, t.project.id);
    producer = createProducer({ brokers: testEnv().kafkaBrokers, clientId: 'messaging-audience-backfill-test' });
    await app.get(AudienceConsumer).started();
  }, 60_000);
  afterAll(async () => {
    jest.restoreAllMocks();
    await producer?.disconnect();
    await app?.close();
    await smsc?.close();
  });

  const send = async (phone: string, text: string) => {
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${encodeURIComponent(phone)}`;
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
      body: JSON.stringify({ text }),
    });
    const body = (await res.json()) as Json;
    expect([res.status, body.metadata]).toEqual([201, { autoCreated: true }]);
    return body.entity as { id: string; audienceId: string | null };
  };
  const audienceOf = async (id: string) => (await db.query(`SELECT audience_id AS "audienceId" FROM sms_messages WHERE id = $1`, [id]))[0].audienceId as string | null;
  const listed = async (audienceId: string) => {
    const url = `/v1/project/${t.project.uid}/channel/sms/sms?audienceId_eq=${audienceId}`;
    const res = await fetch(`${base}${url}`, { headers: principalHeader(t, { scopes: ['PROJECT_DIRECT_READ'] }, { app: 'messaging', url }) });
    expect(res.status).toBe(200);
    return ((await res.json()) as Json).entity.map((m: Json) => m.id) as string[];
  };
  /** What identity-merge does when it merges source contacts: the audience row and its members commit, then the snapshot is published. */
  const merge = async (phone: string, members: Array<[dataSourceId: string, userId: string]>) => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: phone, _phone_mobile: phone });
    for (const [dataSourceId, userId] of members) {
      await db.query(`INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id) VALUES ($1, $2, $3, $4)`, [t.project.id, dataSourceId, userId, audienceId]);
    }
    const m: AudienceChange = {
      schemaVersion: 1, kind: 'snapshot', projectId: t.project.id, audienceId, version: 1, at: new Date().toISOString(), attributes: { _phone_mobile: phone },
      dataSources: [...new Set(members.map(([d]) => d))], dsContactIds: members.map(([d, u]) => `${d}/${u}`),
    };
    await producer.send(Topics.audience, [{ key: keys.audienceContact(m.projectId, m.audienceId), value: m }]);
    return audienceId;
  };

  it("the snapshot naming the number's meld-messaging member gives its messages without audience id that id; redacted ones, other numbers and other sources' members get nothing", async () => {
    const phone = '+447400555201';
    const other = '+447400555202';
    const first = await send(phone, 'Hello, new customer');
    expect(first.audienceId).toBeNull();
    const redacted = await send(phone, 'Hello again');
    await db.query(`UPDATE sms_messages SET redacted_at = now() WHERE id = $1`, [redacted.id]);
    const toOther = await send(other, 'Hello, other');

    // A member of another data source whose user id is the other number is not our contact of that number.
    const audienceId = await merge(phone, [[messaging, phone], [t.dataSource.id, other]]);
    await waitFor('audience id', () => audienceOf(first.id).then((id) => id ?? undefined), { timeoutMs: 30_000 });

    expect(await audienceOf(first.id)).toBe(audienceId);
    expect(await audienceOf(redacted.id)).toBeNull();
    expect(await audienceOf(toOther.id)).toBeNull();
    // The contact's SMS history (ADR 0159) now holds it.
    expect(await listed(audienceId)).toEqual([first.id]);
    // A replayed snapshot writes nothing.
    expect(await app.get(SmsAudienceBackfill).merged([{ projectId: t.project.id, members: [`${messaging}/${phone}`] }])).toBe(0);
  }, 60_000);

  it('a message committed after the snapshot was processed (the merge landed after the send stopped waiting) still gets the id', async () => {
    const phone = '+447400555203';
    const backfill = app.get(SmsAudienceBackfill);
    const processed = jest.spyOn(backfill, 'merged');
    let audienceId = '';
    // The send's last look finds no member; right after it the merge commits and its snapshot is processed, all before the message is stored.
    jest.spyOn(app.get(MessagingContacts), 'audienceOf').mockImplementation(async () => {
      if (!audienceId) {
        audienceId = await merge(phone, [[messaging, phone]]);
        await waitFor('snapshot processed', async () => processed.mock.calls.some(([rows]) => rows.some((r) => r.members.includes(`${messaging}/${phone}`))) || undefined, { timeoutMs: 30_000 });
      }
      return null;
    });
    const sent = await send(phone, 'Hello, late merge');
    expect(sent.audienceId).toBeNull();
    expect(await audienceOf(sent.id)).toBe(audienceId);
  }, 60_000);
});

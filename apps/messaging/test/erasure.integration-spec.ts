import { maskPhone } from '@meld/auth';
import { Topics, keys, type AudienceChange } from '@meld/contracts';
import { type Json, principalHeader } from '@meld/fixtures';
import { createProducer, type Producer } from '@meld/kafka';
import { testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { MessagingContacts } from '../src/contacts/messaging-contacts';
import { AudienceConsumer } from '../src/audience/audience.consumer';
import { SmsRedaction } from '../src/audience/sms-redaction';
import { type Smsc, type Tenancy, seedContact, seedSmsTenancy, startMessaging } from './app.fixture';

type SmsTenancy = Tenancy & { sender: { id: string } };

// A tombstone on meld.audience.v1 (a deleted audience contact) redacts that contact's SMS (ADR 0358).
describe('messaging: the SMS of a deleted audience contact are redacted', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let smsc: Smsc;
  let t: SmsTenancy;
  let producer: Producer;

  beforeAll(async () => {
    ({ app, base, db, smsc } = await startMessaging());
    t = await seedSmsTenancy(db);
    producer = createProducer({ brokers: testEnv().kafkaBrokers, clientId: 'messaging-erasure-test' });
    await app.get(AudienceConsumer).started();
  }, 60_000);
  afterAll(async () => {
    await producer?.disconnect();
    await app?.close();
    await smsc?.close();
  });

  const send = async (audienceId: string, text: string) => {
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${audienceId}`;
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
      body: JSON.stringify({ text }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as Json).entity.id as string;
  };
  const read = async (id: string) => {
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/${id}`;
    const res = await fetch(`${base}${url}`, { headers: principalHeader(t, { scopes: ['PROJECT_DIRECT_READ', 'PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC'] }, { app: 'messaging', url }) });
    expect(res.status).toBe(200);
    return ((await res.json()) as Json).entity;
  };
  const row = async (id: string) =>
    (
      await db.query(
        `SELECT destination, text, request_hash AS "requestHash", redacted_at AS "redactedAt", status, messages_count AS "messagesCount", price_per_sms::float8 AS price, country, sender_id AS "senderId", created_at AS "createdAt"
           FROM sms_messages WHERE id = $1`,
        [id],
      )
    )[0];
  const links = async (id: string) => (await db.query(`SELECT kind, url, clicks FROM sms_links WHERE sms_id = $1 ORDER BY kind`, [id])) as Array<{ kind: string; url: string | null }>;
  /** What identity-merge does when a contact leaves: the audience row goes, then its tombstone is published. */
  const tombstone = async (audienceId: string, removedDsContactIds: string[] = []) => {
    await db.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = $2`, [t.project.id, audienceId]);
    const m: AudienceChange = { schemaVersion: 1, kind: 'tombstone', projectId: t.project.id, audienceId, version: 2, at: new Date().toISOString(), removedDsContactIds };
    await producer.send(Topics.audience, [{ key: keys.audienceContact(m.projectId, m.audienceId), value: m }]);
  };
  /** `absorbed` merged into `survivor`: its row leaves, its alias resolves to the survivor, and identity-merge tombstones it. */
  const absorb = async (absorbed: string, survivor: string) => {
    await db.query(`INSERT INTO audience_aliases (project_id, absorbed_id, survivor_id) VALUES ($1, $2, $3)`, [t.project.id, absorbed, survivor]);
    await tombstone(absorbed);
  };

  it("masks the number and drops the text of every message of the contact and of the ids it absorbed, and their short links' targets; the rest stays", async () => {
    const phone = '+447400555101';
    const deleted = await seedContact(db, t.project.id, { _user_id: 'gone', _phone_mobile: phone });
    const absorbed = await seedContact(db, t.project.id, { _user_id: 'gone-too', _phone_mobile: '+447400555102' });
    const kept = await seedContact(db, t.project.id, { _user_id: 'kept', _phone_mobile: '+447400555103' });
    const keptAbsorbed = await seedContact(db, t.project.id, { _user_id: 'kept-too', _phone_mobile: '+447400555104' });
    const first = await send(deleted, 'Your code is 4821 {{short:https://shop.test/orders/4821?email=ada@example.com}} {{unsubscribe}}');
    const second = await send(absorbed, 'Hello Ada');
    const other = await send(kept, 'Hello Bob');
    const otherAbsorbed = await send(keptAbsorbed, 'Hello Bobby');
    await waitFor('final statuses', async () => {
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM sms_messages WHERE project_id = $1 AND status <> 'enqueued' AND status <> 'sent'`, [t.project.id]);
      return n === 4 || undefined;
    }, { timeoutMs: 10_000 });
    const before = await row(first);

    // Tombstones of absorbed ids are merges: the contact lives on in its survivor and nothing is redacted.
    await absorb(keptAbsorbed, kept);
    await absorb(absorbed, deleted);
    await tombstone(deleted);
    await waitFor('redacted', async () => ((await row(first)).redactedAt && (await row(second)).redactedAt) || undefined, { timeoutMs: 30_000 });

    const after = await row(first);
    expect(after).toEqual({ ...before, destination: maskPhone(phone), text: null, requestHash: null, redactedAt: expect.any(Date) });
    expect(after.destination).toBe('+44******01');
    expect((await row(second)).destination).toBe('+44******02');
    expect((await row(second)).text).toBeNull();
    expect(await links(first)).toEqual([expect.objectContaining({ kind: 'short', url: null }), expect.objectContaining({ kind: 'unsubscribe', url: null })]);
    // Read by a token that may read PII: the message is still there, valid, without its number or text.
    expect(await read(first)).toMatchObject({ id: first, audienceId: deleted, status: before.status, messagesCount: before.messagesCount, pricePerSms: before.price, destination: '+44******01', text: null });
    expect(JSON.stringify(await db.query(`SELECT * FROM sms_messages m LEFT JOIN sms_links l ON l.sms_id = m.id WHERE m.id = ANY($1::uuid[])`, [[first, second]]))).not.toMatch(/7400555101|7400555102|4821|Ada|ada@/);
    // The others keep theirs.
    expect((await row(other)).text).toBe('Hello Bob');
    expect((await row(otherAbsorbed)).text).toBe('Hello Bobby');
    expect((await row(otherAbsorbed)).redactedAt).toBeNull();

    // A replayed tombstone writes nothing.
    const at = after.redactedAt as Date;
    expect(await app.get(SmsRedaction).redact([{ projectId: t.project.id, audienceId: deleted, members: [] }])).toBe(0);
    expect((await row(first)).redactedAt).toEqual(at);
  }, 60_000);

  it("a message stored before its auto-created contact was merged (no audience id) is redacted with the contact whose meld-messaging member is its number", async () => {
    const phone = '+447400555107';
    const deleted = await seedContact(db, t.project.id, { _user_id: phone, _phone_mobile: phone });
    const id = await send(deleted, 'Hello, new customer');
    const other = await send(await seedContact(db, t.project.id, { _user_id: 'other', _phone_mobile: '+447400555108' }), 'Hello, other');
    // As when the merge was slower than the send's wait (ADR 0184): the message names no contact, its number is its source contact.
    await db.query(`UPDATE sms_messages SET audience_id = NULL WHERE id = ANY($1::uuid[])`, [[id, other]]);
    const messaging = await app.get(MessagingContacts).dataSourceId(db.manager, t.project.id);
    // A member of another data source keyed by the same number is not ours: it names no message.
    await tombstone(deleted, [`${messaging}/${phone}`, `${t.dataSource.id}/+447400555108`]);
    await waitFor('redacted', async () => (await row(id)).redactedAt || undefined, { timeoutMs: 30_000 });
    expect(await row(id)).toMatchObject({ destination: '+44******07', text: null });
    expect((await row(other)).text).toBe('Hello, other');
  }, 60_000);

  it('a tombstone naming ids that are not uuids is dead-lettered: the next one on its partition is redacted', async () => {
    const deleted = await seedContact(db, t.project.id, { _user_id: 'gone-after-poison', _phone_mobile: '+447400555106' });
    const id = await send(deleted, 'Hello after poison');
    await db.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = $2`, [t.project.id, deleted]);
    const key = keys.audienceContact(t.project.id, deleted);
    const at = new Date().toISOString();
    const poison: AudienceChange = { schemaVersion: 1, kind: 'tombstone', projectId: 'not-a-uuid', audienceId: '__proto__', version: 1, at };
    const real: AudienceChange = { schemaVersion: 1, kind: 'tombstone', projectId: t.project.id, audienceId: deleted, version: 2, at };
    await producer.send(Topics.audience, [{ key, value: poison }, { key, value: real }]);
    await waitFor('redacted', async () => (await row(id)).redactedAt || undefined, { timeoutMs: 30_000 });
    expect((await row(id)).text).toBeNull();
  }, 60_000);

  it("a redacted message's links are gone: the short link and the unsubscribe page answer 404, and a confirmation records nothing on the masked number", async () => {
    const phone = '+447400555105';
    const deleted = await seedContact(db, t.project.id, { _user_id: 'gone-links', _phone_mobile: phone });
    const id = await send(deleted, 'See {{short:https://shop.test/o/7}} Stop: {{unsubscribe}}');
    const code = async (kind: string) => (await db.query(`SELECT code FROM sms_links WHERE sms_id = $1 AND kind = $2`, [id, kind]))[0].code as string;
    const [short, unsubscribe] = [await code('short'), await code('unsubscribe')];
    // The person opened the page before the erasure and confirms after it.
    expect((await fetch(`${base}/u/${unsubscribe}`)).status).toBe(200);
    await tombstone(deleted);
    await waitFor('redacted', async () => (await row(id)).redactedAt || undefined, { timeoutMs: 30_000 });

    expect((await fetch(`${base}/l/${short}`, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(`${base}/u/${unsubscribe}`)).status).toBe(404);
    const post = await fetch(`${base}/u/${unsubscribe}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(post.status).toBe(404);
    expect(await db.query(`SELECT user_id FROM source_contacts WHERE project_id = $1 AND user_id LIKE '%******%'`, [t.project.id])).toEqual([]);
    expect((await db.query(`SELECT confirmed_at FROM sms_links WHERE code = $1`, [unsubscribe]))[0].confirmed_at).toBeNull();
  }, 60_000);
});

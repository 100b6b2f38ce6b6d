import { randomUUID } from 'node:crypto';
import { Topics, keys } from '@meld/contracts';
import { type Json, collectTopic, principalHeader } from '@meld/fixtures';
import { createProducer, type Producer } from '@meld/kafka';
import { testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { type Smsc, type Tenancy, seedContact, seedSmsTenancy, startMessaging } from './app.fixture';

type SmsTenancy = Tenancy & { sender: { id: string } };

describe('SMS status changes on the contact timeline, on meld.events.v1 (real Postgres, Redis, Kafka, SMSC simulator)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let smsc: Smsc;
  let t: SmsTenancy;
  let events: Awaited<ReturnType<typeof collectTopic>>;
  let producer: Producer;

  beforeAll(async () => {
    ({ app, base, db, smsc } = await startMessaging());
    t = await seedSmsTenancy(db);
    events = await collectTopic(Topics.events, (v) => v.projectId === t.project.id);
    producer = createProducer({ brokers: testEnv().kafkaBrokers, clientId: 'messaging-timeline-test' });
  });
  afterAll(async () => {
    await producer?.disconnect();
    await events?.stop();
    await app?.close();
    await smsc?.close();
  });

  /** An audience contact with one source contact behind it, as identity-merge leaves them. */
  const contact = async (phone: string) => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: `u-${phone}`, _phone_mobile: phone });
    const userId = `crm-${randomUUID()}`;
    await db.query(`INSERT INTO source_contacts (project_id, data_source_id, user_id, attributes, version) VALUES ($1, $2, $3, '{}', 1)`, [t.project.id, t.dataSource.id, userId]);
    await db.query(`INSERT INTO audience_members (project_id, data_source_id, user_id, audience_id) VALUES ($1, $2, $3, $4)`, [t.project.id, t.dataSource.id, userId, audienceId]);
    return { audienceId, userId };
  };
  const send = async (audienceId: string) => {
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${audienceId}`;
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Your order shipped' }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as Json).entity.id as string;
  };
  const eventsOf = (smsId: string, count: number) =>
    waitFor(`${count} timeline events of ${smsId}`, async () => {
      const found = events.messages.filter((m) => m.value.parameters?.smsId === smsId);
      return found.length >= count ? found : undefined;
    }, { timeoutMs: 20_000 });

  it.each([
    ['+447400123431', ['_sms_sent', '_sms_delivered'], undefined],
    ['+447400123413', ['_sms_sent', '_sms_undelivered'], expect.any(String)],
    ['+447400123414', ['_sms_sent', '_sms_expired'], undefined],
    ['+447400123499', ['_sms_failed'], expect.stringContaining('SMSC refused')],
  ])('a message to %s puts %j on the source contact behind the audience contact', async (phone, types, lastError) => {
    const { audienceId, userId } = await contact(phone);
    const smsId = await send(audienceId);
    const found = await eventsOf(smsId, types.length);
    expect(found.map((m) => m.value.eventType)).toEqual(types);
    const last = found.at(-1)!;
    expect(last.key).toBe(`${t.project.id}/${t.dataSource.id}/${userId}`);
    expect(last.value).toEqual({
      schemaVersion: 1, projectId: t.project.id, dataSourceId: t.dataSource.id, userId,
      eventId: `${types.at(-1)}:${smsId}`, eventType: types.at(-1), eventDate: expect.any(String), receivedAt: expect.any(String),
      parameters: { smsId, senderId: t.sender.id, messagesCount: 1, ...(lastError ? { error: lastError } : {}) },
      automation: false,
    });
  });

  it('no event for a contact without a source contact behind it', async () => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-alone', _phone_mobile: '+447400123433' });
    const smsId = await send(audienceId);
    await waitFor('delivered', async () => (await db.query(`SELECT status FROM sms_messages WHERE id = $1`, [smsId]))[0].status === 'delivered' || undefined, { timeoutMs: 10_000 });
    await waitFor('outbox drained', async () => (await db.query(`SELECT count(*)::int AS n FROM sms_outbox WHERE key LIKE $1`, [`${t.project.id}/%`]))[0].n === 0 || undefined, { timeoutMs: 10_000 });
    // A later message's events arrive after this one's would have (one pump, in id order).
    const { audienceId: other } = await contact('+447400123434');
    const later = await send(other);
    await eventsOf(later, 2);
    expect(events.messages.filter((m) => m.value.parameters?.smsId === smsId)).toEqual([]);
  });

  /**
   * What ingest's contact delete does (ADR 0039): in one transaction, the row marked deleted, the
   * contact's events queued in `outbox` taken out and produced, in id order, just before the erase
   * marker, before the COMMIT.
   */
  const deleteContact = async (userId: string) => {
    const qr = db.createQueryRunner();
    await qr.startTransaction();
    try {
      const [{ version, deleted_at: at }] = await qr.query(
        `WITH d AS (UPDATE source_contacts SET attributes = '{}', version = version + 1, deleted_at = now()
                     WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3 AND deleted_at IS NULL AND version > 0 RETURNING version, deleted_at)
         SELECT version, deleted_at FROM d`,
        [t.project.id, t.dataSource.id, userId],
      );
      const key = keys.sourceContact(t.project.id, t.dataSource.id, userId);
      const queued: { value: Json }[] = await qr.query(`WITH q AS (DELETE FROM outbox WHERE topic = $1 AND key = $2 RETURNING id, value) SELECT value FROM q ORDER BY id`, [Topics.events, key]);
      const erase = { schemaVersion: 1, kind: 'erase', projectId: t.project.id, dataSourceId: t.dataSource.id, userId, version: Number(version), at: at.toISOString() };
      await producer.send(Topics.events, [...queued.map((q) => ({ key, value: q.value })), { key, value: erase }]);
      await qr.commitTransaction();
    } finally {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      await qr.release();
    }
  };

  it('the events of a contact deleted while its status events wait to be published precede its erase marker (ADR 0039), so the purge takes them', async () => {
    const { audienceId, userId } = await contact('+447400123435');
    // messaging's sms_outbox relay held: its pump cannot take its table's advisory lock.
    const hold = db.createQueryRunner();
    await hold.startTransaction();
    let smsId: string;
    try {
      await hold.query(`SELECT pg_advisory_xact_lock(hashtext('meld.sms_outbox.pump'))`);
      smsId = await send(audienceId);
      await waitFor('delivered', async () => (await db.query(`SELECT status FROM sms_messages WHERE id = $1`, [smsId]))[0].status === 'delivered' || undefined, { timeoutMs: 10_000 });
      await deleteContact(userId);
    } finally {
      await hold.rollbackTransaction();
      await hold.release();
    }
    const ofContact = (m: { value: Json }) => m.value.userId === userId;
    await waitFor('the marker and both events', async () => {
      const found = events.messages.filter(ofContact);
      return found.some((m) => m.value.kind === 'erase') && found.filter((m) => m.value.parameters?.smsId === smsId).length === 2 || undefined;
    }, { timeoutMs: 20_000 });
    const order = events.messages.filter(ofContact).map((m) => m.value.eventType ?? m.value.kind);
    expect(order).toEqual(['_sms_sent', '_sms_delivered', 'erase']);
  });

  it('no event for a source contact deleted before the status change (ADR 0039): it would follow the erase marker', async () => {
    const { audienceId, userId } = await contact('+447400123436');
    await deleteContact(userId);
    const smsId = await send(audienceId);
    await waitFor('delivered', async () => (await db.query(`SELECT status FROM sms_messages WHERE id = $1`, [smsId]))[0].status === 'delivered' || undefined, { timeoutMs: 10_000 });
    // A later message's events arrive after this one's would have (one pump, in id order).
    const { audienceId: other } = await contact('+447400123437');
    const later = await send(other);
    await eventsOf(later, 2);
    expect(events.messages.filter((m) => m.value.userId === userId).map((m) => m.value.eventType ?? m.value.kind)).toEqual(['erase']);
  });

  it('a message refused after enqueue (opted out while the SMSC was away) is _sms_rejected; the last test: it closes the SMSC', async () => {
    const { audienceId } = await contact('+447400123432');
    await smsc.close().catch(() => undefined);
    const smsId = await send(audienceId);
    await db.query(`UPDATE audience_contacts SET attributes = attributes || '{"_consent_sms":"opt-out"}' WHERE id = $1`, [audienceId]);
    const [event] = await eventsOf(smsId, 1);
    expect(event!.value).toMatchObject({ eventType: '_sms_rejected', parameters: { smsId, error: 'opted_out' } });
  });
});

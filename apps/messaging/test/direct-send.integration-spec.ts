import { type Json, principalHeader } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { type Smsc, type Tenancy, seedContact, seedSmsTenancy, startMessaging } from './app.fixture';

type SmsTenancy = Tenancy & { sender: { id: string } };

describe('POST /v1/project/:project/channel/sms/sms/direct/:sender/:target (real Postgres, Redis, SMSC simulator)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let smsc: Smsc;
  let t: SmsTenancy;

  beforeAll(async () => {
    ({ app, base, db, smsc } = await startMessaging());
    t = await seedSmsTenancy(db);
  });
  afterAll(async () => {
    await app?.close();
    await smsc?.close();
  });

  const send = async (target: string, text: string, { tenancy = t, sender = 'default', key }: { tenancy?: SmsTenancy; sender?: string; key?: string } = {}) => {
    const url = `/v1/project/${tenancy.project.uid}/channel/sms/sms/direct/${sender}/${encodeURIComponent(target)}`;
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { ...principalHeader(tenancy, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify({ text }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const statusOf = async (id: string) => (await db.query(`SELECT status FROM sms_messages WHERE id = $1`, [id]))[0]?.status;
  const historyOf = async (id: string) => (await db.query(`SELECT status FROM sms_status_history WHERE sms_id = $1 ORDER BY id`, [id])).map((r: Json) => r.status);
  const finalStatus = (id: string) => waitFor(`final status of ${id}`, async () => {
    const s = await statusOf(id);
    return s && s !== 'enqueued' && s !== 'sent' ? s : undefined;
  }, { timeoutMs: 10_000 });
  /** Sets one marketing scope field of one channel block of the test project (ADR 0347). */
  const scope = (block: string, field: 'marketingOptOutScope' | 'marketingOptInScope', value: 'per_channel' | 'all_channels') =>
    db.query(`UPDATE projects SET general_config = jsonb_set(general_config, $2::text[], to_jsonb($3::text)) WHERE id = $1`, [t.project.id, [block, field], value]);

  it.each([
    ['07400 123423', 'delivered'],
    ['+447400123413', 'undelivered'],
    ['+447400123414', 'expired'],
    ['+447400123499', 'failed'],
  ])('sends to %s and ends %s, every change in the history', async (phone, final) => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: `u-${final}`, _phone_mobile: phone.startsWith('+') ? phone : '+447400123423' });
    const { status, body } = await send(phone, 'Your code is 4821');
    expect([status, body.message]).toEqual([201, undefined]);
    expect(body).toEqual({
      entity: { id: expect.any(String), status: 'enqueued', encoding: 'GSM-7', messagesCount: 1, pricePerSms: 0.04, audienceId },
      metadata: { autoCreated: false },
    });
    expect(await finalStatus(body.entity.id)).toBe(final);
    expect(await historyOf(body.entity.id)).toEqual(final === 'failed' ? ['enqueued', 'failed'] : ['enqueued', 'sent', final]);
  });

  it('sends to a contact by its audience id, with UCS-2 parts', async () => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-ucs', _phone_mobile: '+447400123555' });
    const { status, body } = await send(audienceId, 'Ünïcødé 🚀 '.repeat(8));
    expect(status).toBe(201);
    expect(body.entity).toMatchObject({ encoding: 'UCS-2', messagesCount: 2, audienceId });
    expect(await finalStatus(body.entity.id)).toBe('delivered');
  });

  it('takes the sender id and the contact id in any case (uuids are case-insensitive on input)', async () => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-caps', _phone_mobile: '+447400123556' });
    const { status, body } = await send(audienceId.toUpperCase(), 'Your order shipped', { sender: t.sender.id.toUpperCase() });
    expect([status, body.message]).toEqual([201, undefined]);
    expect(body.entity).toMatchObject({ audienceId });
    expect((await db.query(`SELECT sender_id FROM sms_messages WHERE id = $1`, [body.entity.id]))[0].sender_id).toBe(t.sender.id);
  });

  it('puts every status change on the outbox of meld.sms-status.v1, in order', async () => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-outbox', _phone_mobile: '+447400123556' });
    const { body } = await send(audienceId, 'outbox');
    await finalStatus(body.entity.id);
    // The relay may already have published them; either way none is lost: published rows are deleted only after the ack.
    await waitFor('outbox drained', async () => (await db.query(`SELECT count(*)::int AS n FROM sms_outbox WHERE key = $1`, [`${t.project.id}/${body.entity.id}`]))[0].n === 0, { timeoutMs: 10_000 });
  });

  it('reads a message with its history; the text and number only for tokens that may read PII', async () => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-read', _phone_mobile: '+447400123557' });
    const { body } = await send(audienceId, 'Your order shipped');
    await finalStatus(body.entity.id);
    const read = async (scopes: Json[]) => {
      const url = `/v1/project/${t.project.uid}/channel/sms/sms/${body.entity.id}`;
      const res = await fetch(`${base}${url}`, { headers: principalHeader(t, { scopes }, { app: 'messaging', url }) });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const full = await read(['PROJECT_DIRECT_READ', 'PROJECT_AUDIENCE_READ', 'PROJECT_AUDIENCE_DATA_BASIC']);
    expect(full.status).toBe(200);
    expect(full.body.entity).toMatchObject({ id: body.entity.id, status: 'delivered', audienceId, senderId: t.sender.id, destination: '+447400123557', text: 'Your order shipped', error: null });
    expect(full.body.entity.history.map((h: Json) => h.status)).toEqual(['enqueued', 'sent', 'delivered']);
    const plain = await read(['PROJECT_DIRECT_READ']);
    expect(plain.body.entity.text).toBeNull();
    expect(plain.body.entity.destination).not.toContain('400123557');
    const missingUrl = `/v1/project/${t.project.uid}/channel/sms/sms/00000000-0000-4000-8000-000000000000`;
    const missing = await fetch(`${base}${missingUrl}`, { headers: principalHeader(t, { scopes: ['PROJECT_DIRECT_READ'] }, { app: 'messaging', url: missingUrl }) });
    expect(missing.status).toBe(404);
  });

  it('refuses an invalid number with 400 naming target, an unknown phone with 404', async () => {
    const bad = await send('12', 'hello');
    expect(bad.status).toBe(400);
    expect(bad.body.details.fields[0].path).toBe('target');
    expect((await send('+447400123777', 'hello')).status).toBe(404);
    const empty = await send('+447400123423', '');
    expect([empty.status, empty.body.details.fields[0].path]).toEqual([400, 'text']);
  });

  it('answers a phone the same whether a contact has it or not while the request cannot be sent: a bad text 400, a country not accepted 422, no funds 422', async () => {
    // Else a refusal that sends nothing would tell a caller who may not search by phone whether the number is a contact.
    const poor = (await seedSmsTenancy(db, { prepaid: true, funds: 0 })) as SmsTenancy;
    for (const [tenancy, phone] of [[t, '+447400123331'], [t, '+33612345671'], [poor, '+447400123332']] as const) {
      await seedContact(db, tenancy.project.id, { _user_id: `u-known-${phone}`, _phone_mobile: phone });
    }
    const cases = [
      ['+447400123331', '+447400123333', 'see {{short:ftp://example.com}}', t, [400, 'text']],
      ['+33612345671', '+33612345673', 'hello', t, [422, 'country_not_accepted']],
      ['+447400123332', '+447400123334', 'hello', poor, [422, 'insufficient_funds']],
    ] as const;
    for (const [known, unknown, text, tenancy, expected] of cases) {
      for (const phone of [known, unknown]) {
        const { status, body } = await send(phone, text, { tenancy });
        expect([phone, status, body.details?.reason ?? body.details?.fields?.[0]?.path]).toEqual([phone, ...expected]);
      }
    }
    expect((await db.query(`SELECT count(*)::int AS n FROM sms_messages WHERE destination = ANY($1::text[])`, [cases.flatMap((c) => [c[0], c[1]])]))[0].n).toBe(0);
  });

  it('refuses a contact who opted out of SMS (422 opted_out), sending nothing', async () => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-out', _phone_mobile: '+447400123321', _consent_sms: 'opt-out' });
    const before = smsc.stats().submitted;
    const { status, body } = await send(audienceId, 'hello');
    expect([status, body.details?.reason]).toEqual([422, 'opted_out']);
    expect((await db.query(`SELECT count(*)::int AS n FROM sms_messages WHERE audience_id = $1`, [audienceId]))[0].n).toBe(0);
    expect(smsc.stats().submitted).toBe(before);
  });

  it('refuses 422 opted_out a contact opted out of email when email opt-outs reach every channel (ADR 0347); sends under per_channel', async () => {
    const optedOutOfEmail = await seedContact(db, t.project.id, { _user_id: 'u-scope-email', _phone_mobile: '+447400124001', _consent_email: 'opt-out', _consent_sms: 'opt-in' });
    await scope('channelEmail', 'marketingOptOutScope', 'all_channels');
    try {
      const before = smsc.stats().submitted;
      const refused = await send(optedOutOfEmail, 'hello');
      expect([refused.status, refused.body.details?.reason]).toEqual([422, 'opted_out']);
      expect((await db.query(`SELECT count(*)::int AS n FROM sms_messages WHERE audience_id = $1`, [optedOutOfEmail]))[0].n).toBe(0);
      expect(smsc.stats().submitted).toBe(before);
      // The scope is the recording channel's: sms's all_channels does not carry an email opt-out to sms.
      await scope('channelEmail', 'marketingOptOutScope', 'per_channel');
      await scope('channelSms', 'marketingOptOutScope', 'all_channels');
      const sent = await send(optedOutOfEmail, 'hello');
      expect([sent.status, sent.body.entity?.audienceId]).toEqual([201, optedOutOfEmail]);
      expect(await finalStatus(sent.body.entity.id)).toBe('delivered');
    } finally {
      await scope('channelEmail', 'marketingOptOutScope', 'per_channel');
      await scope('channelSms', 'marketingOptOutScope', 'per_channel');
    }
  });

  it('refuses a send to a number when any contact of it opted out on a channel whose opt-out reaches every channel (ADR 0347)', async () => {
    const phone = '+447400124002';
    // The project merges on _email only: two contacts of the number stay apart, the later one without any statement.
    await seedContact(db, t.project.id, { _user_id: 'u-scope-phone-1', _phone_mobile: phone, _consent_whatsapp: 'opt-out' });
    const later = await seedContact(db, t.project.id, { _user_id: 'u-scope-phone-2', _phone_mobile: phone });
    await db.query(`UPDATE audience_contacts SET updated_at = now() + interval '1 minute' WHERE id = $1`, [later]);
    const sent = await send(phone, 'hello');
    expect([sent.status, sent.body.entity?.audienceId]).toEqual([201, later]);
    await scope('channelWhatsapp', 'marketingOptOutScope', 'all_channels');
    try {
      const refused = await send(phone, 'hello');
      expect([refused.status, refused.body.details?.reason]).toEqual([422, 'opted_out']);
    } finally {
      await scope('channelWhatsapp', 'marketingOptOutScope', 'per_channel');
    }
  });

  it('refuses a destination country the sender is not accepted in (422 country_not_accepted)', async () => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-fr', _phone_mobile: '+33612345678' });
    const { status, body } = await send(audienceId, 'bonjour');
    expect([status, body.details?.reason, body.details?.country]).toEqual([422, 'country_not_accepted', 'FR']);
  });

  it('auto-creates the contact of an unknown number only for a send that passes its checks (ADR 0184)', async () => {
    await db.query(`UPDATE projects SET general_config = jsonb_set(COALESCE(general_config, '{}'), '{channelSms}', '{"autoCreateContactsOnOutbounds": true}') WHERE id = $1`, [t.project.id]);
    try {
      const created = async (phone: string) => (await db.query(`SELECT count(*)::int AS n FROM source_contacts WHERE project_id = $1 AND user_id = $2`, [t.project.id, phone]))[0].n;
      const france = await send('+33612340001', 'bonjour');
      expect([france.status, france.body.details?.reason]).toEqual([422, 'country_not_accepted']);
      const badLink = await send('+447400123901', 'see {{short:ftp://example.com/x}}');
      expect(badLink.status).toBe(400);
      await db.query(`UPDATE organizations SET prepaid = true, funds = 0.01 WHERE id = $1`, [t.organization.id]);
      const broke = await send('+447400123904', 'hello').finally(() => db.query(`UPDATE organizations SET prepaid = false WHERE id = $1`, [t.organization.id]));
      expect([broke.status, broke.body.details?.reason]).toEqual([422, 'insufficient_funds']);
      expect([await created('+33612340001'), await created('+447400123901'), await created('+447400123904')]).toEqual([0, 0, 0]);
      const sent = await send('+447400123901', 'hello');
      expect([sent.status, sent.body.metadata]).toEqual([201, { autoCreated: true }]);
      expect(await created('+447400123901')).toBe(1);
    } finally {
      await db.query(`UPDATE projects SET general_config = general_config #- '{channelSms,autoCreateContactsOnOutbounds}' WHERE id = $1`, [t.project.id]);
    }
  });

  it('refuses an inactive sender (422 sender_inactive), a contact without a valid mobile (422 no_phone), `default` without a default sender (404), storing nothing', async () => {
    const [inactive] = await db.query(`INSERT INTO senders (project_id, channel, alias, name, status) VALUES ($1, 'sms', 'OLD', 'Old', 'inactive') RETURNING id`, [t.project.id]);
    const reachable = await seedContact(db, t.project.id, { _user_id: 'u-inactive-sender', _phone_mobile: '+447400123902' });
    const fromInactive = await send(reachable, 'hello', { sender: inactive.id });
    expect([fromInactive.status, fromInactive.body.details?.reason]).toEqual([422, 'sender_inactive']);
    const noPhone = await seedContact(db, t.project.id, { _user_id: 'u-no-phone', _phone_mobile: '12' });
    const withoutPhone = await send(noPhone, 'hello');
    expect([withoutPhone.status, withoutPhone.body.details?.reason]).toEqual([422, 'no_phone']);
    const bare = await seedSmsTenancy(db);
    await db.query(`UPDATE projects SET default_sms_sender = NULL WHERE id = $1`, [bare.project.id]);
    const noDefault = await send('+447400123903', 'hello', { tenancy: bare });
    expect([noDefault.status, noDefault.body.message]).toEqual([404, 'the project has no default SMS sender (defaultSmsSender)']);
    // Nothing stored is nothing queued (the SMSC's submit count is the whole suite's: an earlier test's message may still be on its way).
    expect((await db.query(`SELECT count(*)::int AS n FROM sms_messages WHERE audience_id = ANY($1::uuid[]) OR project_id = $2`, [[reachable, noPhone], bare.project.id]))[0].n).toBe(0);
  });

  it('answers a retried Idempotency-Key with the first answer and stores one message', async () => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-idem', _phone_mobile: '+447400123444' });
    const answers = await Promise.all([1, 2, 3, 4].map(() => send(audienceId, 'once', { key: 'order-42' })));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.body.entity.id)).size).toBe(1);
    expect((await db.query(`SELECT count(*)::int AS n FROM sms_messages WHERE audience_id = $1`, [audienceId]))[0].n).toBe(1);
    const reused = await send(audienceId, 'another text', { key: 'order-42' });
    expect([reused.status, reused.body.details?.reason]).toEqual([422, 'idempotency_key_reused']);
  });

  it('answers requests whose reads share one statement each with its own project, sender, target and key (ADR 0295)', async () => {
    const other = (await seedSmsTenancy(db, { price: 0.07 })) as SmsTenancy;
    const mine = await seedContact(db, t.project.id, { _user_id: 'u-group-1', _phone_mobile: '+447400123601' });
    const theirs = await seedContact(db, other.project.id, { _user_id: 'u-group-2', _phone_mobile: '+447400123602' });
    const optedOut = await seedContact(db, t.project.id, { _user_id: 'u-group-3', _phone_mobile: '+447400123603', _consent_sms: 'opt-out' });
    const first = await send(mine, 'keyed', { key: 'group-read' });
    expect(first.status).toBe(201);
    // The projects table locked, the first reads wait in Postgres and the others queue behind
    // them: once it is released, those go as one statement (ADR 0295).
    const lock = db.createQueryRunner();
    await lock.connect();
    await lock.startTransaction();
    await lock.query('LOCK TABLE projects IN ACCESS EXCLUSIVE MODE');
    const sent = Promise.all([
      send(mine, 'to mine'),
      send(theirs, 'to theirs', { tenancy: other }),
      send(optedOut, 'opted out'),
      send(mine, 'unknown sender', { sender: '00000000-0000-4000-8000-000000000001' }),
      send(theirs, 'not their contact'),
      send(mine, 'keyed', { key: 'group-read' }),
      send('+447400123777', 'unknown phone'),
      send(mine, 'to mine, other sender', { sender: other.sender.id }),
      send(mine, 'keyed', { key: 'group-read', tenancy: other }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await lock.commitTransaction();
    await lock.release();
    const answers = await sent;
    expect(answers.map((a) => [a.status, a.body.details?.reason ?? a.body.entity?.pricePerSms ?? null])).toEqual([
      [201, 0.04],
      [201, 0.07],
      [422, 'opted_out'],
      [404, null],
      [400, null],
      [201, 0.04],
      [404, null],
      [404, null],
      [400, null],
    ]);
    expect(answers[0]!.body.entity.audienceId).toBe(mine);
    expect(answers[1]!.body.entity.audienceId).toBe(theirs);
    expect(answers[5]!.body.entity.id).toBe(first.body.entity.id);
  });

  it('refuses a text Postgres cannot store with its own 400 naming text; the sends queued beside it are stored', async () => {
    const mine = await seedContact(db, t.project.id, { _user_id: 'u-nul', _phone_mobile: '+447400123604' });
    // As above: the reads wait behind the lock, then the sends go on together, into one send batch (ADR 0202).
    const lock = db.createQueryRunner();
    await lock.connect();
    await lock.startTransaction();
    await lock.query('LOCK TABLE projects IN ACCESS EXCLUSIVE MODE');
    const sent = Promise.all([send(mine, 'first'), send(mine, 'a NUL \u0000 inside'), send(mine, 'a lone \ud800 surrogate'), send(mine, 'last')]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await lock.commitTransaction();
    await lock.release();
    const answers = await sent;
    expect(answers.map((a) => [a.status, a.body.details?.fields?.[0]?.path ?? null])).toEqual([
      [201, null],
      [400, 'text'],
      [400, 'text'],
      [201, null],
    ]);
  });

  it('rejects at send time a contact merged, after the request, into one that opted out (its id absorbed, ADR 0051)', async () => {
    const absorbed = await seedContact(db, t.project.id, { _user_id: 'u-late-merged', _phone_mobile: '+447400123324' });
    const survivor = await seedContact(db, t.project.id, { _user_id: 'u-late-survivor', _phone_mobile: '+447400123324', _consent_sms: 'opt-out' });
    await smsc.close().catch(() => undefined); // nothing reaches the SMSC meanwhile: the job waits and retries
    const { status, body } = await send(absorbed, 'hello');
    expect(status).toBe(201);
    // identity-merge absorbs the contact: its row goes and its id resolves to the survivor, whose opt-out wins.
    await db.query(`INSERT INTO audience_aliases (project_id, absorbed_id, survivor_id) VALUES ($1, $2, $3)`, [t.project.id, absorbed, survivor]);
    await db.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = $2`, [t.project.id, absorbed]);
    expect(await finalStatus(body.entity.id)).toBe('rejected');
  });

  it('rejects at send time a contact deleted after the request, and one merged into a contact deleted since (ADR 0358): nothing goes to a forgotten number', async () => {
    const deleted = await seedContact(db, t.project.id, { _user_id: 'u-late-deleted', _phone_mobile: '+447400123325' });
    const absorbed = await seedContact(db, t.project.id, { _user_id: 'u-late-absorbed', _phone_mobile: '+447400123326' });
    const survivor = await seedContact(db, t.project.id, { _user_id: 'u-late-gone-survivor', _phone_mobile: '+447400123327' });
    await smsc.close().catch(() => undefined); // nothing reaches the SMSC meanwhile: the job waits and retries
    const one = await send(deleted, 'hello');
    const two = await send(absorbed, 'hello');
    expect([one.status, two.status]).toEqual([201, 201]);
    // identity-merge deletes the audience rows (no alias: the contacts are gone, not merged).
    await db.query(`INSERT INTO audience_aliases (project_id, absorbed_id, survivor_id) VALUES ($1, $2, $3)`, [t.project.id, absorbed, survivor]);
    await db.query(`DELETE FROM audience_contacts WHERE project_id = $1 AND id = ANY($2::uuid[])`, [t.project.id, [deleted, absorbed, survivor]]);
    expect(await finalStatus(one.body.entity.id)).toBe('rejected');
    expect(await finalStatus(two.body.entity.id)).toBe('rejected');
    const errors = await db.query(`SELECT DISTINCT error FROM sms_messages WHERE id = ANY($1::uuid[])`, [[one.body.entity.id, two.body.entity.id]]);
    expect(errors).toEqual([{ error: 'contact_deleted' }]);
    // Stored while the contacts were being deleted (after a tombstone's redaction could run): redacted by the worker.
    const kept = await db.query(`SELECT destination, text FROM sms_messages WHERE id = ANY($1::uuid[]) ORDER BY destination`, [[one.body.entity.id, two.body.entity.id]]);
    expect(kept).toEqual([{ destination: '+44******25', text: null }, { destination: '+44******26', text: null }]);
  });

  it('rejects at send time a contact who opted out after the request, or whom a scope changed since opted out (ADR 0347)', async () => {
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-late', _phone_mobile: '+447400123322' });
    const outOfRcs = await seedContact(db, t.project.id, { _user_id: 'u-late-scope', _phone_mobile: '+447400123323', _consent_rcs: 'opt-out' });
    await smsc.close().catch(() => undefined); // nothing reaches the SMSC meanwhile: the job waits and retries
    const { body } = await send(audienceId, 'hello');
    const scoped = await send(outOfRcs, 'hello');
    expect(scoped.status).toBe(201);
    await db.query(`UPDATE audience_contacts SET attributes = attributes || '{"_consent_sms":"opt-out"}' WHERE id = $1`, [audienceId]);
    await scope('channelRcs', 'marketingOptOutScope', 'all_channels');
    try {
      expect(await finalStatus(body.entity.id)).toBe('rejected');
      expect(await finalStatus(scoped.body.entity.id)).toBe('rejected');
    } finally {
      await scope('channelRcs', 'marketingOptOutScope', 'per_channel');
    }
  });
});

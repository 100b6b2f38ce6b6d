import { type Json, principalHeader } from '@meld/fixtures';
import { waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { type Smsc, seedContact, seedSmsTenancy, startMessaging } from './app.fixture';

describe('direct SMS: prepaid funds (real Postgres, Redis, SMSC simulator)', () => {
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let smsc: Smsc;

  beforeAll(async () => {
    ({ app, base, db, smsc } = await startMessaging());
  });
  afterAll(async () => {
    await app?.close();
    await smsc?.close();
  });

  type T = Awaited<ReturnType<typeof seedSmsTenancy>>;
  const send = async (t: T, target: string, text = 'Your code is 4821', key?: string) => {
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/${t.sender.id}/${encodeURIComponent(target)}`;
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: {
        ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }),
        'content-type': 'application/json',
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: JSON.stringify({ text }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const fundsOf = async (t: T) => Number((await db.query(`SELECT funds FROM organizations WHERE id = $1`, [t.organization.id]))[0].funds);

  it('reserves price × parts at enqueue and never goes below zero under concurrent sends', async () => {
    const t = await seedSmsTenancy(db, { prepaid: true, funds: 1, price: 0.04 });
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-funds', _phone_mobile: '+447400123460' });
    const answers = await Promise.all(Array.from({ length: 40 }, () => send(t, audienceId)));
    const accepted = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 422);
    // Anything else is a defect to read, not a count to compare: show it whole.
    expect(answers.filter((a) => a.status !== 201 && a.status !== 422).map((a) => `${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
    expect([accepted.length, refused.length]).toEqual([25, 15]);
    expect(new Set(refused.map((a) => a.body.details.reason))).toEqual(new Set(['insufficient_funds']));
    expect(await fundsOf(t)).toBe(0);
    const [{ n, reserved }] = await db.query(`SELECT count(*)::int AS n, sum(reserved_funds)::float8 AS reserved FROM sms_messages WHERE organization_id = $1`, [t.organization.id]);
    expect([n, reserved]).toEqual([25, 1]);
  });

  it('answers a retry of a keyed send still in flight with its first answer, not 422 insufficient_funds, when the funds cover one message', async () => {
    const t = await seedSmsTenancy(db, { prepaid: true, funds: 0.04, price: 0.04 });
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-funds-retry', _phone_mobile: '+447400123462' });
    // The retries arrive while the first is stored: they are charged after it (same batch or the next one, behind its lock).
    const answers = await Promise.all(Array.from({ length: 6 }, () => send(t, audienceId, 'Your code is 4821', 'order-7')));
    expect(answers.map((a) => [a.status, a.body.details?.reason ?? null])).toEqual(answers.map(() => [201, null]));
    expect(new Set(answers.map((a) => a.body.entity.id)).size).toBe(1);
    expect(await fundsOf(t)).toBe(0);
    // Another request under the key is still refused for what it is.
    const other = await send(t, audienceId, 'another text', 'order-7');
    expect([other.status, other.body.details?.reason]).toEqual([422, 'idempotency_key_reused']);
  });

  it('reserves for every part, and gives the funds back when the SMSC refuses the message', async () => {
    const t = await seedSmsTenancy(db, { prepaid: true, funds: 1, price: 0.1 });
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-refund', _phone_mobile: '+447400123499' });
    const { status, body } = await send(t, audienceId, 'x'.repeat(161));
    expect([status, body.entity?.messagesCount]).toEqual([201, 2]);
    expect(await fundsOf(t)).toBeCloseTo(0.8, 4);
    await waitFor('failed', async () => (await db.query(`SELECT status FROM sms_messages WHERE id = $1`, [body.entity.id]))[0].status === 'failed', { timeoutMs: 10_000 });
    expect(await fundsOf(t)).toBe(1);
    expect((await db.query(`SELECT reserved_funds::float8 AS r FROM sms_messages WHERE id = $1`, [body.entity.id]))[0].r).toBe(0);
  });

  it('refuses every send of a prepaid organization whose funds are below zero, by a fraction too (the admin API allows down to -1e9)', async () => {
    const t = await seedSmsTenancy(db, { prepaid: true, funds: -0.5, price: 0.04 });
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-in-debt', _phone_mobile: '+447400123463' });
    const { status, body } = await send(t, audienceId);
    expect([status, body.details?.reason]).toEqual([422, 'insufficient_funds']);
    expect(await fundsOf(t)).toBe(-0.5);
  });

  it('does not charge a postpaid organization, nor refuse one whose funds are below zero', async () => {
    const t = await seedSmsTenancy(db, { prepaid: false, funds: 0 });
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-post', _phone_mobile: '+447400123461' });
    expect((await send(t, audienceId)).status).toBe(201);
    expect(await fundsOf(t)).toBe(0);
    const owing = await seedSmsTenancy(db, { prepaid: false, funds: -12.5 });
    const owed = await seedContact(db, owing.project.id, { _user_id: 'u-post-owing', _phone_mobile: '+447400123462' });
    const { status, body } = await send(owing, owed);
    expect([status, body.details?.reason]).toEqual([201, undefined]);
    expect(await fundsOf(owing)).toBe(-12.5);
  });
});

import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { StatusWriter } from '../src/sms/status/status-writer';
import { type Smsc, seedSmsTenancy, startMessaging } from './app.fixture';

/**
 * A receipt's message is found in its status batch's locking statement, by SMSC id (ADR 0316),
 * no longer by a lookup of its own before the batch: the newest message when an SMSC reuses an
 * id, null (the receipt waits and retries) when none has it yet, and an id as the SMSC sent it,
 * quotes and backslashes included, is a value, never SQL (the statement carries it as a literal).
 */
describe('status changes of receipts, by SMSC id (real Postgres)', () => {
  let app: INestApplication;
  let smsc: Smsc;
  let db: DataSource;
  let writer: StatusWriter;
  let t: Awaited<ReturnType<typeof seedSmsTenancy>>;

  beforeAll(async () => {
    ({ app, db, smsc } = await startMessaging());
    writer = app.get(StatusWriter);
    t = await seedSmsTenancy(db);
  });
  afterAll(async () => {
    await app?.close();
    await smsc?.close();
  });

  /** A message already `sent`, with its SMSC id, created `ageMs` ago. */
  const sentMessage = async (smscId: string, ageMs = 0): Promise<string> => {
    const id = randomUUID();
    await db.query(
      `INSERT INTO sms_messages (id, project_id, organization_id, sender_id, destination, country, text, encoding, messages_count, price_per_sms, status, smsc_message_id, created_at)
       VALUES ($1, $2, $3, $4, '+447400000000', 'GB', 'x', 'GSM-7', 1, 0.04, 'sent', $5, now() - make_interval(secs => $6))`,
      [id, t.project.id, t.organization.id, t.sender.id, smscId, ageMs / 1000],
    );
    return id;
  };
  const statusOf = async (id: string): Promise<string> => (await db.query(`SELECT status FROM sms_messages WHERE id = $1`, [id]))[0].status;
  const history = async (id: string): Promise<string[]> =>
    (await db.query(`SELECT status FROM sms_status_history WHERE sms_id = $1 ORDER BY id`, [id])).map((r: { status: string }) => r.status);

  it('changes the newest message with the SMSC id, and only it', async () => {
    const smscId = `smsc-${randomUUID()}`;
    const older = await sentMessage(smscId, 60_000);
    const newer = await sentMessage(smscId);
    expect(await writer.changeBySmscId(smscId, { status: 'delivered' })).toBe(true);
    expect(await statusOf(newer)).toBe('delivered');
    expect(await statusOf(older)).toBe('sent');
    expect(await history(newer)).toEqual(['delivered']);
    // A replayed receipt finds the message and changes nothing.
    expect(await writer.changeBySmscId(smscId, { status: 'delivered' })).toBe(false);
    expect(await history(newer)).toEqual(['delivered']);
  });

  it('answers null for an SMSC id no message has, a quoted one included', async () => {
    await expect(writer.changeBySmscId(`unknown-${randomUUID()}`, { status: 'delivered' })).resolves.toBeNull();
    await expect(writer.changeBySmscId(`it's\\'); DELETE FROM sms_messages; --`, { status: 'delivered' })).resolves.toBeNull();
  });

  it('finds a message whose SMSC id has quotes and backslashes', async () => {
    const smscId = `o'brien\\${randomUUID()}"{,}`;
    const id = await sentMessage(smscId);
    expect(await writer.changeBySmscId(smscId, { status: 'undelivered', error: 'err:013' })).toBe(true);
    expect(await statusOf(id)).toBe('undelivered');
  });

  it('takes changes by id and by SMSC id arriving together, each answered for its own message', async () => {
    const smscIds = Array.from({ length: 20 }, () => `smsc-${randomUUID()}`);
    const ids = await Promise.all(smscIds.map((s) => sentMessage(s)));
    const answers = await Promise.all([
      ...smscIds.slice(0, 10).map((s) => writer.changeBySmscId(s, { status: 'delivered' })),
      ...ids.slice(10).map((id) => writer.change(id, { status: 'expired' })),
      writer.changeBySmscId(`unknown-${randomUUID()}`, { status: 'delivered' }),
      writer.change(randomUUID(), { status: 'delivered' }),
    ]);
    expect(answers).toEqual([...Array(20).fill(true), null, false]);
    expect(await Promise.all(ids.map(statusOf))).toEqual([...Array(10).fill('delivered'), ...Array(10).fill('expired')]);
  });
});

import { randomInt } from 'node:crypto';
import { waitFor } from '@meld/testing';
import { Client } from 'pg';
import { type SmsProject, seedSmsProject, smsStack, unsubscribeLink } from './support/sms-stack';
import { tablesHolding as tablesHoldingIn } from './support/tables-holding';

// A person's erasure (ADRs 0038, 0358): the project deletes the contact that was sent an SMS, and
// afterwards no Postgres table of the system holds its number or the text sent to it; the message
// itself stays, with its status, parts and price, for billing.
describe('SMS of a deleted contact through the gateway', () => {
  let sms: Awaited<ReturnType<typeof smsStack>>;
  let p: SmsProject;
  let db: Client;

  beforeAll(async () => {
    sms = await smsStack();
    p = await seedSmsProject(sms.base);
    db = new Client({ connectionString: sms.postgresUrl });
    await db.connect();
  }, 240000);
  afterAll(async () => {
    await db?.end();
  });

  const tablesHolding = (needle: string) => tablesHoldingIn(db, needle);

  it('deleting the contact leaves neither its number nor the text anywhere in Postgres; the message keeps status, parts and price', async () => {
    const national = `74005${String(randomInt(100_000)).padStart(5, '0')}`;
    const phone = `+44${national}`;
    const secret = `code-${randomInt(1e9)}`;
    // The key row of a deleted contact stays (ADR 0038): its user id holds neither.
    const userId = `erase-${randomInt(1e9)}`;
    const id = await p.contact(userId, phone);
    const sent = await p.send(id, `Your code is ${secret}. Track {{short:https://shop.test/t?c=${secret}}} Stop: {{unsubscribe}}`);
    expect(sent.status).toBe(201);
    const smsId = sent.body.entity.id as string;
    const delivered = await waitFor('delivered', async () => {
      const read = await p.readSms(smsId);
      return read.body?.entity?.status === 'delivered' ? read.body.entity : undefined;
    }, { timeoutMs: 30000 });
    expect(delivered.text).toContain(secret);
    const link = await unsubscribeLink(p, smsId);
    expect(await tablesHolding(national)).toEqual(expect.arrayContaining([expect.stringMatching(/^sms_messages /)]));

    expect((await p.remove(userId)).status).toBe(202);
    await waitFor('the contact gone from the audience', async () => (await p.searchPhone(phone)).status === 404, { timeoutMs: 30000 });
    let left: string[] = [];
    const gone = async () => {
      left = [...(await tablesHolding(national)).map((t) => `number: ${t}`), ...(await tablesHolding(secret)).map((t) => `text: ${t}`)];
      return left.length === 0 || undefined;
    };
    await waitFor('no table holds the number or the text', gone, { timeoutMs: 30000 }).catch(() => undefined);
    expect(left).toEqual([]);

    const read = await p.readSms(smsId);
    expect(read.status).toBe(200);
    expect(read.body.entity).toMatchObject({ id: smsId, status: 'delivered', messagesCount: delivered.messagesCount, pricePerSms: 0.04, destination: `+44******${national.slice(-2)}`, text: null });
    expect((await fetch(link)).status).toBe(404);
  }, 120000);
});

import { join } from 'node:path';
import { principalHeader } from '@meld/fixtures';
import { TcpProxy, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { type Smsc, seedContact, seedSmsTenancy, startMessaging } from './app.fixture';

const { startSmsc } = require(join(__dirname, '../../../tools/smsc/simulator'));

/** Long enough to cut the session between the submit and its receipt on a shared 2-core machine. */
const RECEIPT_DELAY_MS = 2000;

/**
 * Receipts are at least once (ADR 0153): an SMSC keeps the receipts of a system id until they
 * are acknowledged and sends them when it binds again, as the simulator now does (ADR 0285).
 * The SMPP session is cut after the submit and before the receipt (a TcpProxy between messaging
 * and the simulator, stopped, then resumed): messaging binds again and the message still ends
 * `delivered`.
 */
describe('a receipt across a lost SMPP session (SMSC simulator behind a TCP proxy)', () => {
  let smsc: Smsc;
  let proxy: TcpProxy;
  let app: INestApplication;
  let base: string;
  let db: DataSource;

  beforeAll(async () => {
    smsc = await startSmsc({ port: 0, receiptDelayMs: RECEIPT_DELAY_MS });
    proxy = await TcpProxy.start(`smpp://127.0.0.1:${smsc.port}`);
    ({ app, base, db } = await startMessaging({ smsc: { ...smsc, port: proxy.port } }));
  });
  afterAll(async () => {
    await app?.close();
    await proxy?.stop();
    await smsc?.close();
  });

  it('ends delivered when the session is lost after the submit and the receipt comes after the next bind', async () => {
    const t = await seedSmsTenancy(db);
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-receipt', _phone_mobile: '+447400123423' });
    const url = `/v1/project/${t.project.uid}/channel/sms/sms/direct/default/${audienceId}`;
    const res = await fetch(`${base}${url}`, {
      method: 'POST',
      headers: { ...principalHeader(t, { scopes: ['PROJECT_DIRECT_WRITE'] }, { app: 'messaging', method: 'POST', url }), 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Your code is 4821' }),
    });
    expect(res.status).toBe(201);
    const { entity } = (await res.json()) as { entity: { id: string } };
    const status = async () => (await db.query(`SELECT status FROM sms_messages WHERE id = $1`, [entity.id]))[0].status as string;

    await waitFor('sent', async () => (await status()) === 'sent', { timeoutMs: 10_000, intervalMs: 20 });
    await proxy.stop();
    // The receipt falls due while messaging has no session (the simulator used to drop it there).
    await new Promise((resolve) => setTimeout(resolve, RECEIPT_DELAY_MS + 500));
    expect(await status()).toBe('sent');

    await proxy.resume();
    await waitFor('delivered', async () => (await status()) === 'delivered', { timeoutMs: 20_000, intervalMs: 100 });
    // The deliver_sm_resp follows the commit of the status it carries (ADR 0285), so the
    // simulator may still hold the receipt for a moment after the status reads delivered.
    await waitFor('every receipt acknowledged', async () => smsc.stats().receiptsPending === 0, { timeoutMs: 10_000, intervalMs: 20 });
  });
});

import { join } from 'node:path';
import { waitFor } from '@meld/testing';
import { Logger } from '@nestjs/common';
import { SmscClient, SubmitUnavailable } from '../src/sms/delivery/smsc-client';

const { startSmsc } = require(join(__dirname, '../../../tools/smsc/simulator'));

interface Smsc {
  port: number;
  close(): Promise<void>;
  forget(): number;
  stats(): { sessions: number };
}

const sms = { source: 'MELD', destination: '+447700900778', text: 'Your code is 4821', encoding: 'GSM-7' as const, messagesCount: 1 };

/**
 * An SMSC that lost our bind while the connection stayed open (a failover behind a proxy, the
 * simulator's forget()) answers every submit_sm ESME_RINVBNDSTS. That says nothing about the
 * message: the submit is retried and the session bound again (ADR 0153). Before, each message
 * was `failed` for good and the session stayed as it was, so every later one failed too.
 */
describe('SmscClient against an SMSC that lost its bind (SMSC simulator)', () => {
  let smsc: Smsc;
  let client: SmscClient;
  let submitted: string[];

  beforeEach(async () => {
    submitted = [];
    smsc = await startSmsc({ port: 0, receiptDelayMs: 50, onSubmit: (s: { status: string }) => submitted.push(s.status) });
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    client = new SmscClient({ url: `smpp://meld-forget:secret@127.0.0.1:${smsc.port}`, onReceipt: async () => undefined, onInbound: async () => undefined });
    client.start();
    await waitFor('bound', async () => client.state().bound, { timeoutMs: 10_000, intervalMs: 20 });
  });
  afterEach(async () => {
    await client?.stop();
    await smsc?.close();
    jest.restoreAllMocks();
  });

  it('ESME_RINVBNDSTS is a lost session: the submit is retried (SubmitUnavailable) and the client binds again, where the next submit is accepted', async () => {
    expect(await client.submit(sms)).toEqual(expect.any(String));
    expect(smsc.forget()).toBe(1);
    await expect(client.submit(sms)).rejects.toBeInstanceOf(SubmitUnavailable);
    expect(submitted).toEqual(['accepted']);
    // The retry the queue makes: the client binds again (after its backoff) and the SMSC accepts.
    await waitFor('accepted again', () => client.submit(sms), { timeoutMs: 10_000, intervalMs: 100 });
    expect(client.state().bound).toBe(true);
    expect(submitted.at(-1)).toBe('accepted');
  });
});

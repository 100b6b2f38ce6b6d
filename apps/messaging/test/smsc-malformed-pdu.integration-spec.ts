import { join } from 'node:path';
import { waitFor } from '@meld/testing';
import { Logger } from '@nestjs/common';
import { type Inbound, SmscClient } from '../src/sms/delivery/smsc-client';

const { startSmsc } = require(join(__dirname, '../../../tools/smsc/simulator'));

interface Smsc {
  port: number;
  close(): Promise<void>;
  malformed(kind?: 'oversized'): number;
  mo(sms: { from: string; to: string; text: string }): Promise<number[]>;
}

const sms = { source: 'MELD', destination: '+447700900780', text: 'Your code is 4821', encoding: 'GSM-7' as const, messagesCount: 1 };

/**
 * A PDU from the SMSC that the `smpp` package cannot parse (a receipt ending in an empty
 * message_state TLV): the package emits 'error' and reads nothing more from the connection. The
 * client skips that PDU and reads on (ADR 0153). Before, the session stayed bound and deaf:
 * submits waited for answers that were never read until a deadline closed it, and the SMSC sent
 * the same PDU again after the next bind.
 */
describe('SmscClient and a PDU it cannot parse (SMSC simulator)', () => {
  let smsc: Smsc;
  let client: SmscClient;
  const inbound: Inbound[] = [];
  const warnings: string[] = [];

  beforeAll(async () => {
    smsc = await startSmsc({ port: 0, receiptDelayMs: 50 });
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    client = new SmscClient({
      url: `smpp://meld-malformed:secret@127.0.0.1:${smsc.port}`,
      responseTimeoutMs: 2000,
      // Longer than the test: a session closed in it was closed for the PDU.
      enquireLinkTimeoutMs: 60_000,
      onReceipt: async () => undefined,
      onInbound: async (m) => void inbound.push(m),
    });
    client.start();
    await waitFor('bound', async () => client.state().bound, { timeoutMs: 10_000, intervalMs: 20 });
  });
  afterAll(async () => {
    await client?.stop();
    await smsc?.close();
    jest.restoreAllMocks();
  });

  it('the PDU is skipped: the same session answers the next submit and reads the next deliver_sm', async () => {
    const since = client.state().since;
    expect(smsc.malformed()).toBe(1);
    expect(await client.submit(sms)).toEqual(expect.any(String));
    expect(await smsc.mo({ from: '447700900780', to: 'MELD', text: 'STOP' })).toEqual([0]);
    expect(inbound).toEqual([{ from: '447700900780', to: 'MELD', text: 'STOP' }]);
    expect(client.state()).toEqual({ bound: true, since });
    expect(warnings.some((w) => /could not be read/.test(w))).toBe(true);
  });

  it('a frame too long to skip closes the session at once, and it binds again', async () => {
    const since = client.state().since;
    expect(smsc.malformed('oversized')).toBe(1);
    await waitFor('bound again', async () => client.state().bound && client.state().since !== since, { timeoutMs: 5000, intervalMs: 20 });
    expect(await client.submit(sms)).toEqual(expect.any(String));
  });
});

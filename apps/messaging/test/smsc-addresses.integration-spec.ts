import { join } from 'node:path';
import { waitFor } from '@meld/testing';
import { Logger } from '@nestjs/common';
import { SmscClient } from '../src/sms/delivery/smsc-client';

const { startSmsc } = require(join(__dirname, '../../../tools/smsc/simulator'));

interface Submitted {
  source: string;
  sourceTon: number;
  sourceNpi: number;
  destination: string;
}

/**
 * The sender's alias as the submit_sm source address (SMPP 3.4 §5.2.5-5.2.8): an address holds
 * no `+`, an international number says so by TON 1 / NPI 1 and an alphanumeric sender by TON 5,
 * as the destination already did. Before, the alias went as written with TON 0 / NPI 0: an
 * E.164 alias (`+447700900123`, how long codes are usually written) reached the SMSC with its
 * `+`, which SMSCs refuse as an invalid source address, and the message ended `failed`.
 */
describe('SmscClient source addresses (SMSC simulator)', () => {
  let smsc: { port: number; close(): Promise<void> };
  let client: SmscClient;
  let submitted: Submitted[];

  beforeAll(async () => {
    submitted = [];
    smsc = await startSmsc({ port: 0, receiptDelayMs: 50, onSubmit: (s: Submitted) => submitted.push(s) });
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    client = new SmscClient({ url: `smpp://meld-addresses:secret@127.0.0.1:${smsc.port}`, onReceipt: async () => undefined, onInbound: async () => undefined });
    client.start();
    await waitFor('bound', async () => client.state().bound, { timeoutMs: 10_000, intervalMs: 20 });
  });
  afterAll(async () => {
    await client?.stop();
    await smsc?.close();
    jest.restoreAllMocks();
  });

  it.each([
    ['+447700900123', { source: '447700900123', sourceTon: 1, sourceNpi: 1 }],
    ['MELD', { source: 'MELD', sourceTon: 5, sourceNpi: 0 }],
    ['Acme Ltd', { source: 'Acme Ltd', sourceTon: 5, sourceNpi: 0 }],
    ['447700900124', { source: '447700900124', sourceTon: 0, sourceNpi: 0 }],
    ['60123', { source: '60123', sourceTon: 0, sourceNpi: 0 }],
  ])('alias %j goes as %j', async (alias, expected) => {
    await client.submit({ source: alias, destination: '+447700900779', text: 'Your code is 4821', encoding: 'GSM-7', messagesCount: 1 });
    expect(submitted.at(-1)).toMatchObject({ ...expected, destination: '447700900779' });
  });
});

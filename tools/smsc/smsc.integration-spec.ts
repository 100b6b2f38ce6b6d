// The SMSC simulator against a real `smpp` client over loopback. Each test starts its own
// simulator on a random port, so no local stack is needed.
/* eslint-disable @typescript-eslint/no-explicit-any */
import * as net from 'node:net';

// `smpp` ships no types and the simulator is plain CommonJS, hence require.
const smpp = require('smpp');
const { startSmsc } = require('./simulator');

type Pdu = Record<string, any>;
interface SmscStats { submitted: number; failed: number; receiptsSent: number; receiptsResent: number; receiptsPending: number; sessions: number }
interface Smsc { port: number; close(): Promise<void>; stats(): SmscStats; stall(): void; resume(): void; stalled(): boolean; mo(sms: { from: string; to: string; text: string }): Promise<number[]> }
interface Receipt { pdu: Pdu; at: number; fields: Record<string, string> }

const RECEIPT_DELAY_MS = 100;
// Long enough that a receipt which was going to come would have come.
const NO_RECEIPT_WAIT_MS = RECEIPT_DELAY_MS * 4;
const RECEIPT_FORMAT =
  /^id:(?<id>\S+) sub:(?<sub>\d{3}) dlvrd:(?<dlvrd>\d{3}) submit date:(?<submitDate>\d{10}) done date:(?<doneDate>\d{10}) stat:(?<stat>[A-Z]+) err:(?<err>\w{3}) text:(?<text>.*)$/;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const waitUntil = async (ok: () => boolean, timeoutMs = 3000) => {
  for (const until = Date.now() + timeoutMs; !ok(); await sleep(10)) if (Date.now() > until) throw new Error('condition not met in time');
};

/** The command_status a TestEsme answers a deliver_sm with; null: no answer at all. */
type Answer = (pdu: Pdu) => number | null;

/** A minimal ESME: binds, submits, collects receipts (answering each with deliver_sm_resp, ESME_ROK unless `answer` says otherwise). */
class TestEsme {
  readonly receipts = new Map<string, Receipt>();
  /** Every deliver_sm received, resends included. */
  readonly delivered: Pdu[] = [];
  private readonly waiters = new Map<string, (receipt: Receipt) => void>();

  private constructor(
    readonly session: any,
    answer: Answer,
  ) {
    session.on('error', () => undefined); // the simulator closing on us is expected in tests
    session.on('deliver_sm', (pdu: Pdu) => {
      this.delivered.push(pdu);
      const status = answer(pdu);
      if (status !== null) session.send(pdu.response({ command_status: status }));
      const fields = RECEIPT_FORMAT.exec(pdu.short_message.message)?.groups ?? {};
      const receipt = { pdu, at: Date.now(), fields };
      this.receipts.set(pdu.receipted_message_id, receipt);
      this.waiters.get(pdu.receipted_message_id)?.(receipt);
    });
  }

  static async bind(port: number, command = 'bind_transceiver', systemId = 'meld', answer: Answer = () => 0): Promise<TestEsme> {
    const session = smpp.connect({ url: `smpp://127.0.0.1:${port}` });
    const esme = new TestEsme(session, answer);
    const resp = await new Promise<Pdu>((resolve) => session[command]({ system_id: systemId, password: 'x' }, resolve));
    expect(resp.command_status).toBe(0);
    return esme;
  }

  /** Resolves with submit_sm_resp and the time it arrived. */
  submit(params: Pdu): Promise<{ resp: Pdu; at: number }> {
    return new Promise((resolve) =>
      this.session.submit_sm({ source_addr: 'MELD', registered_delivery: 1, ...params }, (resp: Pdu) =>
        resolve({ resp, at: Date.now() }),
      ),
    );
  }

  receiptFor(messageId: string, timeoutMs = 3000): Promise<Receipt> {
    const received = this.receipts.get(messageId);
    if (received) return Promise.resolve(received);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no receipt for ${messageId} in ${timeoutMs} ms`)), timeoutMs);
      this.waiters.set(messageId, (receipt) => {
        clearTimeout(timer);
        resolve(receipt);
      });
    });
  }

  close(): Promise<void> {
    // destroy()'s callback waits for 'close', which never comes again on a closed socket.
    if (this.session.socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => this.session.destroy(() => resolve()));
  }
}

describe('SMSC simulator', () => {
  let smsc: Smsc;
  let logRecords: Pdu[];
  const esmes: TestEsme[] = [];
  const bind = async (command?: string, systemId?: string, answer?: Answer) => {
    const esme = await TestEsme.bind(smsc.port, command, systemId, answer);
    esmes.push(esme);
    return esme;
  };
  let submits: Pdu[];
  const submitted = (messageId: string) => submits.find((r) => r.messageId === messageId);

  beforeEach(async () => {
    logRecords = [];
    submits = [];
    const capture = (record: Pdu) => logRecords.push(record);
    smsc = await startSmsc({ port: 0, receiptDelayMs: RECEIPT_DELAY_MS, logger: { info: capture, warn: capture }, onSubmit: (s: Pdu) => submits.push(s) });
  });

  afterEach(async () => {
    await Promise.all(esmes.splice(0).map((esme) => esme.close()));
    await smsc.close();
  });

  it.each([
    ['+4915112345670', 'DELIVRD', 2, '001'],
    ['+4915112345613', 'UNDELIV', 5, '000'],
    ['+4915112345614', 'EXPIRED', 3, '000'],
  ])('destination %s gets a %s receipt about 100 ms after the response', async (destination, stat, messageState, dlvrd) => {
    const esme = await bind();
    const { resp, at } = await esme.submit({ destination_addr: destination, short_message: 'Your code is 123456, valid 5 minutes' });
    expect(resp.command_status).toBe(0);
    expect(resp.message_id).toMatch(/^[0-9a-f]+$/);

    const receipt = await esme.receiptFor(resp.message_id);
    expect(receipt.pdu).toMatchObject({
      esm_class: 0x04,
      receipted_message_id: resp.message_id,
      message_state: messageState,
      source_addr: destination, // receipts come back from the handset
      destination_addr: 'MELD',
    });
    expect(receipt.fields).toMatchObject({ id: resp.message_id, sub: '001', dlvrd, stat, text: 'Your code is 123456,' });
    const delay = receipt.at - at;
    expect(delay).toBeGreaterThanOrEqual(RECEIPT_DELAY_MS - 10);
    expect(delay).toBeLessThan(RECEIPT_DELAY_MS + 900); // generous: shared 2-core machine
    // Its log names neither the number nor the text (ADR 0338): the ending that picked the outcome, the length.
    expect(submitted(resp.message_id)).toMatchObject({ destination, text: 'Your code is 123456, valid 5 minutes' });
    expect(logRecords.find((r) => r.event === 'submit_sm')).toMatchObject({ destinationEnding: `…${destination.slice(-2)}`, textLength: 36 });
    expect(JSON.stringify(logRecords)).not.toMatch(/4915112345|Your code/);
  });

  it('refuses a destination ending in 99 with ESME_RSUBMITFAIL and sends no receipt', async () => {
    const esme = await bind();
    const { resp } = await esme.submit({ destination_addr: '+4915112345699', short_message: 'hello' });
    expect(resp.command_status).toBe(smpp.ESME_RSUBMITFAIL);
    expect(resp.message_id).toBeUndefined();

    await sleep(NO_RECEIPT_WAIT_MS);
    expect(esme.receipts.size).toBe(0);
    expect(smsc.stats()).toMatchObject({ submitted: 0, failed: 1, receiptsSent: 0 });
  });

  it('refuses a destination ending in 98 with ESME_RINVDSTADR (an invalid destination, ADR 0361) and sends no receipt', async () => {
    const esme = await bind();
    const { resp } = await esme.submit({ destination_addr: '+4915112345698', short_message: 'hello' });
    expect(resp.command_status).toBe(smpp.ESME_RINVDSTADR);
    expect(resp.message_id).toBeUndefined();

    await sleep(NO_RECEIPT_WAIT_MS);
    expect(esme.receipts.size).toBe(0);
    expect(smsc.stats()).toMatchObject({ submitted: 0, failed: 1, receiptsSent: 0 });
  });

  it('sends no receipt when registered_delivery is 0', async () => {
    const esme = await bind();
    const { resp } = await esme.submit({ destination_addr: '+4915112345670', short_message: 'hello', registered_delivery: 0 });
    expect(resp.command_status).toBe(0);

    await sleep(NO_RECEIPT_WAIT_MS);
    expect(esme.receipts.size).toBe(0);
    expect(smsc.stats()).toMatchObject({ submitted: 1, receiptsSent: 0 });
  });

  it('decodes UCS-2 text (data_coding 8) and keeps the receipt in the default alphabet', async () => {
    const esme = await bind();
    const text = 'Привет, мир! 你好 €';
    const { resp } = await esme.submit({ destination_addr: '+4915112345670', short_message: text, data_coding: 8 });
    expect(resp.command_status).toBe(0);

    expect(submitted(resp.message_id)).toMatchObject({ dataCoding: 8, text });
    const receipt = await esme.receiptFor(resp.message_id);
    expect(receipt.pdu.data_coding).toBe(0);
    expect(receipt.fields.text).toBe('??????, ???! ?? €'); // € is in the GSM extension table
  });

  it.each([
    ['a UDH (esm_class 0x40)', (seq: number) => ({ short_message: { udh: Buffer.from([0x05, 0x00, 0x03, 0x2a, 0x02, seq]), message: `part ${seq} ` } })],
    ['sar_* TLVs', (seq: number) => ({ short_message: `part ${seq} `, sar_msg_ref_num: 0x2a, sar_total_segments: 2, sar_segment_seqnum: seq })],
  ])('treats each part of a two-part message sent with %s as its own SMS', async (_how, part) => {
    const esme = await bind();
    const responses = await Promise.all([1, 2].map((seq) => esme.submit({ destination_addr: '+4915112345670', ...part(seq) })));
    const ids = responses.map(({ resp }) => resp.message_id);
    expect(responses.map(({ resp }) => resp.command_status)).toEqual([0, 0]);
    expect(new Set(ids).size).toBe(2);

    const receipts = await Promise.all(ids.map((id) => esme.receiptFor(id)));
    expect(receipts.map((r) => r.fields.text)).toEqual(['part 1 ', 'part 2 ']);
    expect(ids.map((id) => submitted(id)?.part)).toEqual([
      { ref: 0x2a, total: 2, seq: 1 },
      { ref: 0x2a, total: 2, seq: 2 },
    ]);
  });

  it('reads the text from message_payload when short_message is empty', async () => {
    const esme = await bind();
    const text = 'A long message. '.repeat(20);
    const { resp } = await esme.submit({ destination_addr: '+4915112345670', message_payload: text });
    expect(resp.command_status).toBe(0);
    expect(submitted(resp.message_id)?.text).toBe(text);
    expect((await esme.receiptFor(resp.message_id)).fields.text).toBe(text.slice(0, 20));
  });

  it('answers 500 concurrent submits, each with a unique id and one receipt', async () => {
    const esme = await bind();
    const count = 500;
    const responses = await Promise.all(
      Array.from({ length: count }, (_, i) => esme.submit({ destination_addr: `+49151${String(i).padStart(6, '0')}0`, short_message: `load ${i}` })),
    );
    const ids = responses.map(({ resp }) => resp.message_id);
    expect(responses.every(({ resp }) => resp.command_status === 0)).toBe(true);
    expect(new Set(ids).size).toBe(count);

    const receipts = await Promise.all(ids.map((id) => esme.receiptFor(id, 10_000)));
    expect(receipts.map((r) => r.fields.id)).toEqual(ids);
    expect(smsc.stats()).toMatchObject({ submitted: count, failed: 0, receiptsSent: count });
  });

  it('routes a transmitter’s receipts to a receiver bound with the same system_id', async () => {
    const transmitter = await bind('bind_transmitter', 'split');
    const receiver = await bind('bind_receiver', 'split');
    const { resp } = await transmitter.submit({ destination_addr: '+4915112345670', short_message: 'hello' });

    const receipt = await receiver.receiptFor(resp.message_id);
    expect(receipt.fields.stat).toBe('DELIVRD');
    expect(transmitter.receipts.size).toBe(0);
  });

  it('keeps a receipt while no session of its system_id can receive it, and sends it when one binds again', async () => {
    const first = await bind('bind_transceiver', 'keeper');
    const { resp } = await first.submit({ destination_addr: '+4915112345670', short_message: 'kept' });
    await first.close();
    await sleep(NO_RECEIPT_WAIT_MS);
    expect(first.receipts.size).toBe(0);
    expect(smsc.stats()).toMatchObject({ receiptsSent: 0, receiptsPending: 1 });
    // Another system_id's session does not get it.
    const other = await bind('bind_transceiver', 'other');
    await sleep(NO_RECEIPT_WAIT_MS);
    expect(other.delivered).toEqual([]);

    const again = await bind('bind_receiver', 'keeper');
    expect((await again.receiptFor(resp.message_id)).fields).toMatchObject({ id: resp.message_id, stat: 'DELIVRD', text: 'kept' });
    // A receipt stays pending until the session's deliver_sm_resp reaches the simulator: a later turn of the event loop.
    await waitUntil(() => smsc.stats().receiptsPending === 0);
    expect(smsc.stats()).toMatchObject({ receiptsSent: 1, receiptsPending: 0 });
  });

  it('sends a receipt again to the next bind when its session closes before answering it', async () => {
    const silent = await bind('bind_transceiver', 'dropper', () => null);
    const { resp } = await silent.submit({ destination_addr: '+4915112345613', short_message: 'unanswered' });
    await waitUntil(() => silent.delivered.length === 1);
    await silent.close();

    const again = await bind('bind_transceiver', 'dropper');
    expect((await again.receiptFor(resp.message_id)).fields.stat).toBe('UNDELIV');
    await waitUntil(() => smsc.stats().receiptsPending === 0);
    expect(smsc.stats()).toMatchObject({ receiptsSent: 2, receiptsResent: 1, receiptsPending: 0 });
  });

  it('sends a receipt refused with a temporary error again after receiptRetryMs, and drops one refused for good', async () => {
    await smsc.close();
    smsc = await startSmsc({ port: 0, receiptDelayMs: RECEIPT_DELAY_MS, receiptRetryMs: 200 });
    // ESME_RX_T_APPN (0x64) to the first attempt at 'retry me', ESME_RX_P_APPN (0x65) to 'refuse me'.
    const seen = new Map<string, number>();
    const esme = await bind('bind_transceiver', 'meld', (pdu) => {
      const text = RECEIPT_FORMAT.exec(pdu.short_message.message)?.groups?.text ?? '';
      seen.set(text, (seen.get(text) ?? 0) + 1);
      if (text === 'refuse me') return 0x65;
      return text === 'retry me' && seen.get(text) === 1 ? 0x64 : 0;
    });
    const retried = await esme.submit({ destination_addr: '+4915112345670', short_message: 'retry me' });
    await esme.submit({ destination_addr: '+4915112345670', short_message: 'refuse me' });
    await waitUntil(() => seen.get('retry me') === 2);
    expect(esme.delivered.filter((pdu) => pdu.receipted_message_id === retried.resp.message_id)).toHaveLength(2);
    await sleep(NO_RECEIPT_WAIT_MS);
    expect(Object.fromEntries(seen)).toEqual({ 'retry me': 2, 'refuse me': 1 });
    expect(smsc.stats()).toMatchObject({ receiptsSent: 3, receiptsResent: 1, receiptsPending: 0 });
  });

  it('answers enquire_link, refuses submits before bind and nacks unknown commands', async () => {
    const session = smpp.connect({ url: `smpp://127.0.0.1:${smsc.port}` });
    session.on('error', () => undefined);
    const enquire = await new Promise<Pdu>((resolve) => session.enquire_link(resolve));
    expect(enquire).toMatchObject({ command: 'enquire_link_resp', command_status: 0 });
    const unbound = await new Promise<Pdu>((resolve) => session.submit_sm({ destination_addr: '+4915112345670', short_message: 'x' }, resolve));
    expect(unbound.command_status).toBe(smpp.ESME_RINVBNDSTS);
    session.destroy();

    // A raw header with a command id the smpp package does not know (so it cannot be sent through it).
    const socket = net.connect(smsc.port, '127.0.0.1');
    const header = Buffer.alloc(16);
    header.writeUInt32BE(16, 0);
    header.writeUInt32BE(0x00000999, 4);
    header.writeUInt32BE(42, 12);
    socket.write(header);
    const reply = await new Promise<Buffer>((resolve) => socket.once('data', resolve));
    socket.destroy();
    expect([reply.readUInt32BE(4), reply.readUInt32BE(8), reply.readUInt32BE(12)]).toEqual([0x80000000, smpp.ESME_RINVCMDID, 42]);
  });

  it('stall() keeps the connections open and answers nothing (enquire_link, submit, a bind, receipts, MO) until resume() answers what waited (ADR 0348)', async () => {
    const esme = await bind();
    const before = await esme.submit({ destination_addr: '+4915112345670', short_message: 'before' });
    smsc.stall();
    expect(smsc.stalled()).toBe(true);

    const answers: string[] = [];
    const enquire = new Promise<Pdu>((resolve) => esme.session.enquire_link((pdu: Pdu) => (answers.push('enquire_link_resp'), resolve(pdu))));
    const during = esme.submit({ destination_addr: '+4915112345671', short_message: 'during' }).then((r) => (answers.push('submit_sm_resp'), r));
    const late = smpp.connect({ url: `smpp://127.0.0.1:${smsc.port}` });
    late.on('error', () => undefined);
    const lateBind = new Promise<Pdu>((resolve) => late.bind_transceiver({ system_id: 'late', password: 'x' }, (pdu: Pdu) => (answers.push('bind_transceiver_resp'), resolve(pdu))));
    expect(await smsc.mo({ from: '+447700900123', to: 'SHOP', text: 'STOP' })).toEqual([]);

    // Well past the receipt's delay: nothing comes back, and nothing is closed.
    await sleep(NO_RECEIPT_WAIT_MS * 2);
    expect(answers).toEqual([]);
    expect(esme.delivered).toEqual([]);
    expect([esme.session.socket.destroyed, late.socket.destroyed, smsc.stats().sessions]).toEqual([false, false, 2]);
    expect(submits.map((s) => s.text)).toEqual(['before']);

    smsc.resume();
    expect(smsc.stalled()).toBe(false);
    expect((await enquire).command_status).toBe(0);
    expect((await during).resp.command_status).toBe(0);
    expect((await lateBind).command_status).toBe(0);
    // In order on each connection (the two connections' answers interleave as they may).
    expect(answers.filter((a) => a !== 'bind_transceiver_resp')).toEqual(['enquire_link_resp', 'submit_sm_resp']);
    // The receipt that fell due during the stall, then the new one.
    expect((await esme.receiptFor(before.resp.message_id)).fields.text).toBe('before');
    expect((await esme.receiptFor((await during).resp.message_id)).fields.text).toBe('during');
    late.destroy();
  });

  it('close() ends the sessions, drops pending receipts and resolves', async () => {
    const esme = await bind();
    const closed = new Promise<void>((resolve) => esme.session.once('close', resolve));
    await esme.submit({ destination_addr: '+4915112345670', short_message: 'hello' });

    await smsc.close();
    await closed;
    await sleep(NO_RECEIPT_WAIT_MS);
    expect(esme.receipts.size).toBe(0);
    expect(smsc.stats()).toMatchObject({ submitted: 1, receiptsSent: 0, sessions: 0 });
  });
});

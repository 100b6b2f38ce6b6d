// The simulator's mobile-originated control (ADR 0183) and its stall switch (ADR 0348): its
// HTTP control port, `meld smsc send` and `meld smsc stall|resume`, against the simulator as a process (server.js, as the stack runs it) and a
// real `smpp` receiver. No local stack is needed.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const smpp = require('smpp');
const { spawnSmsc } = require('./spawn');

type Pdu = Record<string, any>;
const run = promisify(execFile);
const MELD = join(__dirname, '../cli/meld.js');

/** An ESME bound as a receiver: answers every deliver_sm and keeps it. */
async function bindReceiver(smppUrl: string) {
  const session = smpp.connect({ url: smppUrl });
  session.on('error', () => undefined); // the simulator stopping first is expected
  const received: Pdu[] = [];
  session.on('deliver_sm', (pdu: Pdu) => {
    received.push(pdu);
    session.send(pdu.response());
  });
  const resp = await new Promise<Pdu>((resolve) => session.bind_receiver({ system_id: 'meld', password: 'x' }, resolve));
  expect(resp.command_status).toBe(0);
  return { session, received, close: () => new Promise<void>((resolve) => (session.socket.destroyed ? resolve() : session.destroy(() => resolve()))) };
}

const postMo = async (controlUrl: string, body: string, method = 'POST', path = '/mo') => {
  const res = await fetch(`${controlUrl}${path}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'GET' ? undefined : body });
  return { status: res.status, body: await res.json() };
};

/** `meld smsc <verb> …`: its exit code and output (a non-zero exit is an answer here, not an error). */
const meldSmsc = (verb: string, args: string[]) =>
  run(process.execPath, [MELD, 'smsc', verb, ...args]).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: any) => ({ code: err.code as number, stdout: err.stdout as string, stderr: err.stderr as string }),
  );
const meldSend = (args: string[]) => meldSmsc('send', args);

describe('SMSC simulator: mobile-originated control', () => {
  let smsc: { smppUrl: string; controlUrl: string; stop(): Promise<void> };
  let receiver: Awaited<ReturnType<typeof bindReceiver>> | undefined;

  beforeEach(async () => {
    smsc = await spawnSmsc();
  });
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
    await smsc.stop();
  });

  it('POST /mo delivers a deliver_sm from the handset to every receiving session and answers their statuses', async () => {
    receiver = await bindReceiver(smsc.smppUrl);
    const res = await postMo(smsc.controlUrl, JSON.stringify({ from: '+447700900123', to: 'SHOP', text: 'STOP' }));
    expect(res).toEqual({ status: 200, body: { sessions: [0] } });
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]).toMatchObject({ esm_class: 0, source_addr: '447700900123', destination_addr: 'SHOP', short_message: { message: 'STOP' } });
  });

  it('refuses a body that is not JSON or lacks a field, naming it; other paths are 404', async () => {
    expect(await postMo(smsc.controlUrl, '{"from":')).toEqual({ status: 400, body: { message: 'body: not JSON' } });
    expect(await postMo(smsc.controlUrl, JSON.stringify({ from: '+447700900123', to: 'SHOP' }))).toEqual({ status: 400, body: { message: 'text: a non-empty string is required' } });
    expect(await postMo(smsc.controlUrl, JSON.stringify({ from: '', to: 'SHOP', text: 'STOP' }))).toEqual({ status: 400, body: { message: 'from: a non-empty string is required' } });
    expect((await postMo(smsc.controlUrl, '', 'GET')).status).toBe(404);
    expect((await postMo(smsc.controlUrl, '{}', 'POST', '/other')).status).toBe(404);
  });

  it('with no bound session, POST /mo answers an empty list', async () => {
    expect(await postMo(smsc.controlUrl, JSON.stringify({ from: '+447700900123', to: 'SHOP', text: 'STOP' }))).toEqual({ status: 200, body: { sessions: [] } });
  });

  it('`meld smsc send --from --to --text` sends through the control port (UCS-2 text too) and exits 0', async () => {
    receiver = await bindReceiver(smsc.smppUrl);
    const sent = await meldSend(['--from', '+447700900124', '--to', 'SHOP', '--text', 'Arrêt 🙅', '--control', smsc.controlUrl]);
    expect(sent).toEqual({ code: 0, stdout: 'sent to 1 session(s); answers: [0]\n', stderr: '' });
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]).toMatchObject({ source_addr: '447700900124', destination_addr: 'SHOP', data_coding: 8 });
    expect(receiver.received[0].short_message.message).toBe('Arrêt 🙅');
  });

  it('POST /stall keeps the session open and answers nothing, POST /resume answers what waited; `meld smsc stall|resume` do the same', async () => {
    receiver = await bindReceiver(smsc.smppUrl);
    expect(await postMo(smsc.controlUrl, '', 'POST', '/stall')).toEqual({ status: 200, body: { stalled: true } });
    let answered = false;
    const enquire = new Promise<Pdu>((resolve) => receiver!.session.enquire_link((pdu: Pdu) => ((answered = true), resolve(pdu))));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect([answered, receiver.session.socket.destroyed]).toEqual([false, false]);
    expect(await postMo(smsc.controlUrl, '', 'POST', '/resume')).toEqual({ status: 200, body: { stalled: false } });
    expect((await enquire).command_status).toBe(0);

    expect(await meldSmsc('stall', ['--control', smsc.controlUrl])).toEqual({ code: 0, stdout: 'stalled: connections stay open, nothing is answered\n', stderr: '' });
    const stalledMo = await postMo(smsc.controlUrl, JSON.stringify({ from: '+447700900123', to: 'SHOP', text: 'STOP' }));
    expect(stalledMo).toEqual({ status: 200, body: { sessions: [] } });
    expect(await meldSmsc('resume', ['--control', smsc.controlUrl])).toEqual({ code: 0, stdout: 'answering\n', stderr: '' });
    expect(await postMo(smsc.controlUrl, JSON.stringify({ from: '+447700900123', to: 'SHOP', text: 'STOP' }))).toEqual({ status: 200, body: { sessions: [0] } });
  });

  it('`meld smsc send` exits 2 naming a missing option and 1 when no session received the message', async () => {
    const missing = await meldSend(['--from', '+447700900123', '--to', 'SHOP', '--control', smsc.controlUrl]);
    expect([missing.code, missing.stderr.split('\n')[0]]).toEqual([2, '--text is required']);
    const nobody = await meldSend(['--from', '+447700900123', '--to', 'SHOP', '--text', 'STOP', '--control', smsc.controlUrl]);
    expect([nobody.code, nobody.stdout]).toEqual([1, 'sent to 0 session(s); answers: []\n']);
  });
});

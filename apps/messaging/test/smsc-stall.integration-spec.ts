import { join } from 'node:path';
import { metricsRegistry } from '@meld/platform';
import { testEnv, waitFor } from '@meld/testing';
import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { type Receipt, SmscClient, type SmscOptions, SubmitUnavailable } from '../src/sms/delivery/smsc-client';
import { smscChecks } from '../src/sms/delivery/smsc-readiness';

const { startSmsc } = require(join(__dirname, '../../../tools/smsc/simulator'));

interface Smsc {
  port: number;
  close(): Promise<void>;
  stall(): void;
  resume(): void;
}

const ENQUIRE_LINK_MS = 300;
const DEADLINE_MS = 700;
/** Timers and the setImmediate after the deadline, on a shared 2-core machine. */
const SLACK_MS = 1500;
const PHONE = '+447700900777';

const sms = (destination = PHONE) => ({ source: 'MELD', destination, text: 'Your code is 4821', encoding: 'GSM-7' as const, messagesCount: 1 });
const metric = async (name: string) => (await metricsRegistry.getSingleMetric(name)!.get()).values[0]?.value;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A stalled SMSC: the TCP connection stays open, nothing is answered (the simulator's stall
 * switch). The client finds it by the deadline on enquire_link_resp, closes the session, fails
 * the submits in flight as a lost session (the queue retries them) and binds again with backoff
 * once the SMSC answers (ADR 0348). Before, it stayed bound and readiness said the session was fine.
 */
describe('SmscClient against a stalled SMSC (SMSC simulator)', () => {
  let smsc: Smsc;
  let client: SmscClient | undefined;
  let submitted: string[];

  const start = (options: Partial<SmscOptions> = {}) => {
    client = new SmscClient({
      url: `smpp://meld-stall:secret@127.0.0.1:${smsc.port}`,
      enquireLinkMs: ENQUIRE_LINK_MS,
      enquireLinkTimeoutMs: DEADLINE_MS,
      // Longer than the test: a submit that fails did so because the session was closed.
      responseTimeoutMs: 60_000,
      onReceipt: async () => undefined,
      onInbound: async () => undefined,
      ...options,
    });
    client.start();
    return client;
  };
  const bound = (c: SmscClient) => waitFor('bound', async () => c.state().bound, { timeoutMs: 10_000, intervalMs: 20 });

  beforeEach(async () => {
    submitted = [];
    smsc = await startSmsc({ port: 0, receiptDelayMs: 50, onSubmit: (s: { destination: string }) => submitted.push(s.destination) });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    smsc.resume();
    await client?.stop();
    client = undefined;
    await smsc.close();
  });

  it('a healthy session stays bound across many enquire_links: no reconnect', async () => {
    const c = start();
    await bound(c);
    const { since } = c.state();
    const reconnects = await metric('meld_messaging_smsc_reconnects_total');
    await sleep(ENQUIRE_LINK_MS * 8);
    expect(c.state()).toEqual({ bound: true, since });
    expect(await metric('meld_messaging_smsc_reconnects_total')).toBe(reconnects);
    expect(await metric('meld_messaging_smsc_session_bound')).toBe(1);
  });

  it('stalled: unbound within the enquire_link period and the deadline, the submit in flight failed as a lost session; bound again once the SMSC answers', async () => {
    const c = start();
    await bound(c);
    expect(await c.submit(sms('+447700900701'))).toMatch(/^[0-9a-f]+$/);
    const reconnects = (await metric('meld_messaging_smsc_reconnects_total')) ?? 0;

    smsc.stall();
    const stalledAt = Date.now();
    const inFlight = c.submit(sms('+447700900702')).then(
      () => 'resolved',
      (err: Error) => err,
    );
    await waitFor('unbound', async () => !c.state().bound, { timeoutMs: ENQUIRE_LINK_MS + DEADLINE_MS + SLACK_MS, intervalMs: 20 });
    expect(Date.now() - stalledAt).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(c.state().reason).toBe(`no enquire_link_resp within ${DEADLINE_MS} ms`);
    expect(await metric('meld_messaging_smsc_session_bound')).toBe(0);
    const lost = await inFlight;
    expect(lost).toBeInstanceOf(SubmitUnavailable);
    expect((lost as Error).message).toBe('SMSC session lost');

    // Still stalled: each new connection's bind goes unanswered and is given up after the deadline, with backoff.
    await waitFor('a bind given up', async () => c.state().reason === `no bind_transceiver_resp within ${DEADLINE_MS} ms`, { timeoutMs: 5000, intervalMs: 20 });
    expect(await metric('meld_messaging_smsc_reconnects_total')).toBeGreaterThan(reconnects);
    // Readiness after its grace names the reason (ADR 0348), never the URL's password.
    const check = smscChecks(c, 'delivery', () => c.state().since + 10_000)[0]!;
    await expect(check.check(new AbortController().signal)).rejects.toThrow(/^no SMPP session bound for 10 s \(no bind_transceiver_resp within 700 ms\)/);

    smsc.resume();
    await bound(c);
    expect(await metric('meld_messaging_smsc_session_bound')).toBe(1);
    expect(await c.submit(sms('+447700900703'))).toMatch(/^[0-9a-f]+$/);
    // The stalled submit was written before the loss: the SMSC read it once it answered again. The
    // queue submits it again, the one documented duplicate (ADR 0153).
    await waitFor('the stalled submit read', async () => submitted.includes('447700900702'), { timeoutMs: 5000, intervalMs: 20 });
  });

  it('a submit left without its response probes the session at once, without waiting for the next enquire_link', async () => {
    const c = start({ enquireLinkMs: 60_000, responseTimeoutMs: 500 });
    await bound(c);
    smsc.stall();
    const stalledAt = Date.now();
    await expect(c.submit(sms())).rejects.toThrow(new SubmitUnavailable('no submit_sm_resp in time'));
    await waitFor('unbound', async () => !c.state().bound, { timeoutMs: DEADLINE_MS + SLACK_MS, intervalMs: 20 });
    expect(Date.now() - stalledAt).toBeLessThan(500 + DEADLINE_MS + SLACK_MS);
    expect(c.state().reason).toBe(`no enquire_link_resp within ${DEADLINE_MS} ms`);
    smsc.resume();
    await bound(c);
  });

  it('a receipt the store refuses is logged by the error’s class and SQLSTATE, not its text quoting a phone (ADR 0338)', async () => {
    const pg = new Client({ connectionString: testEnv().postgresUrl });
    await pg.connect();
    const refusal: Error = await pg.query('SELECT $1::uuid', [PHONE]).then(
      () => new Error('no error'),
      (err: Error) => err,
    );
    await pg.end();
    expect(refusal.message).toContain(PHONE);
    const warnings: string[] = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
    let refused = 0;
    const c = start({
      onReceipt: async (_receipt: Receipt) => {
        refused++;
        throw refusal;
      },
    });
    await bound(c);
    await c.submit(sms());
    await waitFor('the receipt refused', async () => refused > 0, { timeoutMs: 5000, intervalMs: 20 });
    expect(warnings).toContain('receipt not stored, asking the SMSC to resend: DatabaseError 22P02');
    for (const line of warnings) expect(line).not.toContain(PHONE.slice(1));
  });
});

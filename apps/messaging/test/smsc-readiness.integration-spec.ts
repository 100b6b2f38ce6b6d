import { join } from 'node:path';
import { TcpProxy, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { SMSC_UNBOUND_GRACE_MS } from '../src/sms/delivery/smsc-readiness';
import { type Smsc, startMessaging } from './app.fixture';

const { startSmsc } = require(join(__dirname, '../../../tools/smsc/simulator'));

/** The SMSC URL's user info is a credential: it must show in no answer. */
const PASSWORD = 'smsc-pa55-readiness';

type Readyz = { code: number; text: string; body: { status: string; info?: Record<string, { status: string; message?: string }>; error?: Record<string, { status: string; message?: string }>; details: Record<string, { status: string; message?: string }> } };

/**
 * Readiness reports the SMPP session of the processes that deliver (ADR 0348), on a real SMSC
 * simulator behind a TCP proxy that cuts and restores the session: a `delivery` process turns
 * 503 once the session has been unbound for the grace, an `all` process stays 200 but says
 * `degraded`, an `api` process does not check the SMSC; a short cut flaps nothing; the gauge
 * follows the session and the reconnect counter counts the attempts.
 */
describe('readiness of the SMPP session (SMSC simulator behind a TCP proxy)', () => {
  let smsc: Smsc;
  let proxy: TcpProxy;
  const apps: Record<'delivery' | 'all' | 'api', { app: INestApplication; base: string }> = {} as never;

  const readyz = async (role: keyof typeof apps): Promise<Readyz> => {
    const res = await fetch(`${apps[role].base}/readyz`);
    const text = await res.text();
    return { code: res.status, text, body: JSON.parse(text) };
  };
  const metric = async (name: string, labels = ''): Promise<number | undefined> => {
    const text = await (await fetch(`${apps.delivery.base}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };
  const bothBound = async () => (await readyz('delivery')).body.details.smsc?.status === 'up' && (await readyz('all')).body.status === 'ok' && (await metric('meld_messaging_smsc_session_bound')) === 1;

  beforeAll(async () => {
    smsc = await startSmsc({ port: 0, receiptDelayMs: 50 });
    proxy = await TcpProxy.start(`smpp://127.0.0.1:${smsc.port}`);
    const url = `smpp://meld-readiness:${PASSWORD}@127.0.0.1:${proxy.port}`;
    for (const role of ['delivery', 'all', 'api'] as const) apps[role] = await startMessaging({ smsc: { ...smsc, port: proxy.port }, overrides: { MELD_SMSC_URL: url, MELD_MESSAGING_ROLE: role } });
  });
  afterAll(async () => {
    for (const a of Object.values(apps)) await a.app?.close();
    await proxy?.stop();
    await smsc?.close();
  });

  it('is ready while bound; an api process does not check the SMSC', async () => {
    await waitFor('both delivering processes bound', bothBound, { timeoutMs: 20_000 });
    const delivery = await readyz('delivery');
    expect([delivery.code, delivery.body.status, Object.keys(delivery.body.details).sort()]).toEqual([200, 'ok', ['kafka', 'postgres', 'redis', 'smsc']]);
    const api = await waitFor('api ready', async () => ((await readyz('api')).code === 200 ? readyz('api') : undefined));
    expect(Object.keys(api.body.details).sort()).toEqual(['kafka', 'postgres', 'redis']);
  });

  it('a cut shorter than the grace flaps nothing: every /readyz stays 200 and ok while the session binds again', async () => {
    const reconnectsBefore = (await metric('meld_messaging_smsc_reconnects_total')) ?? 0;
    const seen = new Set<string>();
    let polling = true;
    const poll = (async () => {
      while (polling) {
        for (const role of ['delivery', 'all'] as const) {
          const r = await readyz(role);
          seen.add(`${r.code} ${r.body.status}`);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await proxy.stop();
    await waitFor('the session lost', async () => (await metric('meld_messaging_smsc_session_bound')) === 0, { intervalMs: 20 });
    await new Promise((r) => setTimeout(r, 2000));
    await proxy.resume();
    await waitFor('bound again', bothBound, { timeoutMs: SMSC_UNBOUND_GRACE_MS });
    polling = false;
    await poll;
    expect([...seen]).toEqual(['200 ok']);
    expect(await metric('meld_messaging_smsc_reconnects_total')).toBeGreaterThan(reconnectsBefore);
  });

  it('after the grace without a session: delivery 503 naming the reason, all degraded, the gauge 0; ready again once the SMSC is back', async () => {
    await proxy.stop();
    const cut = Date.now();
    await waitFor('the session lost', async () => (await metric('meld_messaging_smsc_session_bound')) === 0, { intervalMs: 20 });
    expect((await readyz('delivery')).code).toBe(200);

    const down = await waitFor('delivery not ready', async () => ((await readyz('delivery')).code === 503 ? readyz('delivery') : undefined), { timeoutMs: SMSC_UNBOUND_GRACE_MS + 10_000, intervalMs: 250 });
    expect(Date.now() - cut).toBeGreaterThanOrEqual(SMSC_UNBOUND_GRACE_MS - 500);
    expect(down.body.status).toBe('error');
    expect(down.body.error!.smsc!.message).toMatch(/^no SMPP session bound for \d+ s \(session error ECONNREFUSED\); sends stay enqueued until it binds$/);
    expect(down.body.details.postgres!.status).toBe('up');

    const all = await readyz('all');
    expect([all.code, all.body.status, all.body.info!.smsc!.status]).toEqual([200, 'degraded', 'degraded']);
    expect(all.body.info!.smsc!.message).toMatch(/no SMPP session bound/);
    expect(all.body.error).toEqual({});

    expect(await metric('meld_messaging_smsc_session_bound')).toBe(0);
    expect(await metric('meld_readiness_check_up', 'check="smsc"')).toBe(0);
    const metrics = await (await fetch(`${apps.delivery.base}/metrics`)).text();
    for (const text of [down.text, all.text, metrics]) expect(text).not.toContain(PASSWORD);

    await proxy.resume();
    await waitFor('ready again', async () => (await readyz('delivery')).code === 200, { timeoutMs: 20_000, intervalMs: 250 });
    await waitFor('both bound again', bothBound, { timeoutMs: 5000 });
    expect(await metric('meld_readiness_check_up', 'check="smsc"')).toBe(1);
  });
});

import { TcpProxy, testEnv, waitFor } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { SendQueue } from '../src/sms/delivery/send-queue';
import { type Smsc, seedContact, seedSmsTenancy, startMessaging, timedSend } from './app.fixture';

/** MELD_REDIS_TIMEOUT_MS of the app under test: short, so a stall shows quickly. */
const TIMEOUT_MS = 500;

/**
 * A direct SMS while messaging's Redis stalls (connections open, nothing answered: the test's
 * TcpProxy paused, so the shared Redis is never touched): the send answers within about
 * MELD_REDIS_TIMEOUT_MS instead of waiting for Redis (ADR 0284), and loses nothing. Refused
 * before anything is stored (503, Retry-After) when the queue does not answer its check;
 * accepted (201) and delivered once Redis answers when it stalls after the check, during the
 * queueing of the committed message.
 */
describe('direct SMS while Redis stalls (TCP proxy, real Postgres and SMSC simulator)', () => {
  let proxy: TcpProxy;
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let smsc: Smsc;

  beforeAll(async () => {
    const redisUrl = testEnv().redisUrl;
    proxy = await TcpProxy.start(redisUrl);
    ({ app, base, db, smsc } = await startMessaging({ overrides: { MELD_REDIS_URL: proxy.via(redisUrl), MELD_REDIS_TIMEOUT_MS: String(TIMEOUT_MS) } }));
  });
  afterEach(() => {
    proxy.unpause();
    jest.restoreAllMocks();
  });
  afterAll(async () => {
    await app?.close();
    await smsc?.close();
    await proxy?.stop();
  });

  type T = Awaited<ReturnType<typeof seedSmsTenancy>>;
  // Before ADR 0284 the send waited for as long as Redis was silent.
  const send = (t: T, audienceId: string, key: string) => timedSend(base, t, audienceId, key, 10_000);
  const fundsOf = async (t: T) => Number((await db.query(`SELECT funds FROM organizations WHERE id = $1`, [t.organization.id]))[0].funds);
  const messagesOf = async (t: T) => db.query(`SELECT id::text, status, idempotency_key AS key FROM sms_messages WHERE organization_id = $1`, [t.organization.id]);
  const delivered = (id: string) => waitFor(`${id} delivered`, async () => (await db.query(`SELECT status FROM sms_messages WHERE id = $1`, [id]))[0]?.status === 'delivered', { timeoutMs: 20_000 });

  it('refuses with 503 and Retry-After within about MELD_REDIS_TIMEOUT_MS, storing and charging nothing; the retry sends it', async () => {
    const t = await seedSmsTenancy(db, { prepaid: true, funds: 1, price: 0.04 });
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-stall', _phone_mobile: '+447400123423' });
    proxy.pause();
    const refused = await send(t, audienceId, 'stall-1');
    expect({ status: refused.status, retryAfter: refused.retryAfter, message: refused.body.message }).toEqual({
      status: 503,
      retryAfter: expect.stringMatching(/^[1-9][0-9]*$/),
      message: expect.stringContaining('nothing was stored'),
    });
    // The check's timeout, plus the request's own work on a shared 2-core machine.
    expect(refused.ms).toBeLessThan(TIMEOUT_MS * 2 + 1000);
    expect(await messagesOf(t)).toEqual([]);
    expect(await fundsOf(t)).toBe(1);

    proxy.unpause();
    const retried = await send(t, audienceId, 'stall-1');
    expect(retried.status).toBe(201);
    await delivered(retried.body.entity.id);
    expect(await fundsOf(t)).toBeCloseTo(0.96, 4);
  });

  it('accepts a message whose queueing stalls after the check (201 within about the timeout), and delivers it once Redis answers', async () => {
    const t = await seedSmsTenancy(db, { prepaid: true, funds: 1, price: 0.04 });
    const audienceId = await seedContact(db, t.project.id, { _user_id: 'u-stall-late', _phone_mobile: '+447400123423' });
    // Redis stalls right after it answered the check: only the queueing, after COMMIT, meets the stall.
    jest.spyOn(SendQueue.prototype, 'checkReachable').mockResolvedValue(undefined);
    proxy.pause();
    const accepted = await send(t, audienceId, 'stall-2');
    expect(accepted.status).toBe(201);
    expect(accepted.ms).toBeLessThan(TIMEOUT_MS * 2 + 1000);
    expect(await messagesOf(t)).toEqual([{ id: accepted.body.entity.id, status: 'enqueued', key: 'stall-2' }]);
    expect(await fundsOf(t)).toBeCloseTo(0.96, 4);

    // The stalled connections are cut, so the timed-out add never reaches Redis; then Redis answers again.
    await proxy.stop();
    proxy.unpause();
    await proxy.resume();
    // The job is added again every second until Redis takes it: delivered well before the sweep would see the
    // message (it re-queues those enqueued for over 30 s).
    await delivered(accepted.body.entity.id);
    expect(await fundsOf(t)).toBeCloseTo(0.96, 4);
  });
});

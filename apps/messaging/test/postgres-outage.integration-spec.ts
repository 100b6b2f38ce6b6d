import type { Json } from '@meld/fixtures';
import { operationsWithoutPostgres503, TcpProxy, testEnv } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { type Smsc, seedContact, seedSmsTenancy, startMessaging, timedSend } from './app.fixture';

/**
 * A direct SMS while messaging's Postgres is cut or stalled (a TcpProxy in front of the test
 * database): a 503 with Retry-After within the request bound, never a 500 or a request held
 * for as long as Postgres is silent; nothing stored, queued or charged, and the retry with the
 * same idempotency key, once Postgres is back, sends it once (ADR 0360).
 */
describe('direct SMS while Postgres is down or stalled (TCP proxy)', () => {
  let proxy: TcpProxy;
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let smsc: Smsc;

  beforeAll(async () => {
    const postgresUrl = testEnv().postgresUrl;
    proxy = await TcpProxy.start(postgresUrl);
    ({ app, base, db, smsc } = await startMessaging({ overrides: { MELD_POSTGRES_URL: proxy.via(postgresUrl), MELD_POSTGRES_REQUEST_TIMEOUT_MS: '2000' } }));
  }, 60_000);
  afterAll(async () => {
    proxy?.unpause();
    await app?.close();
    await smsc?.close();
    await proxy?.stop();
  });

  type T = Awaited<ReturnType<typeof seedSmsTenancy>>;
  const send = (t: T, audienceId: string, key: string) => timedSend(base, t, audienceId, key, 20_000);
  const fundsOf = async (t: T) => Number((await db.query(`SELECT funds FROM organizations WHERE id = $1`, [t.organization.id]))[0].funds);
  const messagesOf = async (t: T) => db.query(`SELECT id::text FROM sms_messages WHERE organization_id = $1`, [t.organization.id]);
  const unavailable = { status: 503, retryAfter: '5', message: 'Postgres did not answer: retry later' };

  async function refusedThenSent(key: string, phone: string, outage: { start(): unknown; end(): unknown }) {
    const t = await seedSmsTenancy(db, { prepaid: true, funds: 1, price: 0.04 });
    const audienceId = await seedContact(db, t.project.id, { _user_id: `u-${key}`, _phone_mobile: phone });
    expect((await send(t, audienceId, `${key}-warm`)).status).toBe(201);
    await outage.start();
    let refused;
    try {
      refused = await send(t, audienceId, key);
    } finally {
      await outage.end();
    }
    expect({ status: refused.status, retryAfter: refused.retryAfter, message: refused.body.message }).toEqual(unavailable);
    expect(refused.ms).toBeLessThan(8_000);
    expect(await messagesOf(t)).toHaveLength(1);
    expect(await fundsOf(t)).toBeCloseTo(0.96, 4);
    const retried = await send(t, audienceId, key);
    expect(retried.status).toBe(201);
    expect(await messagesOf(t)).toHaveLength(2);
    expect(await fundsOf(t)).toBeCloseTo(0.92, 4);
  }

  it('Postgres refusing connections: 503 with Retry-After, nothing stored or charged; the retry sends it once', async () => {
    await refusedThenSent('pg-cut', '+447400123431', { start: () => proxy.stop(), end: () => proxy.resume() });
  }, 40_000);

  it('Postgres silent (connections open, no answer): 503 within the bound, nothing stored or charged; the retry sends it once', async () => {
    await refusedThenSent('pg-stall', '+447400123432', { start: () => proxy.pause(), end: () => proxy.unpause() });
  }, 40_000);

  it('its OpenAPI document lists the 503 with Retry-After on every route: each reads or writes Postgres', async () => {
    const doc: Json = await (await fetch(`${base}/openapi.json`)).json();
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0);
    expect(operationsWithoutPostgres503(doc)).toEqual([]);
  });
});

import { principalHeader, seedTenancy } from '@meld/fixtures';
import { TcpProxy, testEnv } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { startReadiness } from './app.fixture';

/**
 * Postgres cut or stalled between the readiness app and the shared store (a TcpProxy): a report
 * is a clear 503 with Retry-After within the read's bound, never a 500 or a request held for as
 * long as Postgres is silent, and the next call once it is back is a report again (ADR 0131).
 */
describe('readiness while Postgres is down or stalled', () => {
  const env = testEnv();
  const BOUND_MS = 1500;
  let proxy: TcpProxy;
  let direct: Awaited<ReturnType<typeof startReadiness>>;
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    proxy = await TcpProxy.start(env.postgresUrl);
    direct = await startReadiness();
    // The operator's request bound (ADR 0360), shorter than the 5 s default.
    ({ app, base } = await startReadiness({ MELD_POSTGRES_URL: proxy.via(env.postgresUrl), MELD_POSTGRES_REQUEST_TIMEOUT_MS: String(BOUND_MS) }));
  });
  afterAll(async () => {
    proxy?.unpause();
    await app?.close();
    await direct?.app.close();
    await proxy?.stop();
  });

  async function read(t: Awaited<ReturnType<typeof seedTenancy>>, path = '') {
    const url = `/v1/project/${t.project.uid}/readiness${path}`;
    const started = Date.now();
    const res = await fetch(`${base}${url}`, { headers: principalHeader(t, {}, { app: 'readiness', url }), signal: AbortSignal.timeout(20_000) });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { message?: string }, ms: Date.now() - started };
  }
  const unavailable = { status: 503, retryAfter: '5', body: expect.objectContaining({ message: 'the readiness store (Postgres) did not answer: retry later' }) };

  it('Postgres refusing connections: 503 with Retry-After; a report again once it is back', async () => {
    const t = await seedTenancy(direct.db);
    expect((await read(t)).status).toBe(200);
    await proxy.stop();
    try {
      for (const path of ['', '/channel/sms']) expect(await read(t, path)).toMatchObject(unavailable);
    } finally {
      await proxy.resume();
    }
    expect((await read(t)).status).toBe(200);
  });

  it('Postgres silent (connections open, no answer): 503 within the bound, not a held request', async () => {
    const t = await seedTenancy(direct.db);
    expect((await read(t)).status).toBe(200);
    proxy.pause();
    try {
      // The open connection's statement within MELD_POSTGRES_REQUEST_TIMEOUT_MS (it was a fixed 5 s
      // here), then a new connection's handshake within the pool's connect bound (5 s).
      const statement = await read(t);
      expect(statement).toMatchObject(unavailable);
      expect(statement.ms).toBeGreaterThanOrEqual(BOUND_MS - 100);
      expect(statement.ms).toBeLessThan(BOUND_MS + 1_500);
      for (const path of ['', '/channel/rcs']) {
        const res = await read(t, path);
        expect(res).toMatchObject(unavailable);
        expect(res.ms).toBeLessThan(8_000);
      }
    } finally {
      proxy.unpause();
    }
    expect((await read(t)).status).toBe(200);
  }, 40_000);
});

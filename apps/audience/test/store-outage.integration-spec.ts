import { principalHeader, seedTenancy } from '@meld/fixtures';
import { TcpProxy, testEnv } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import { startAudience } from './app.fixture';

/**
 * Postgres cut or stalled between the audience app and the shared store (a TcpProxy): a read is
 * a clear 503 with Retry-After within the request bound, never a 500 or a request held for as
 * long as Postgres is silent, and the next read once it is back is answered again (ADR 0360).
 */
describe('audience reads while Postgres is down or stalled', () => {
  const env = testEnv();
  let proxy: TcpProxy;
  let direct: Awaited<ReturnType<typeof startAudience>>;
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    proxy = await TcpProxy.start(env.postgresUrl);
    direct = await startAudience();
    ({ app, base } = await startAudience({ MELD_POSTGRES_URL: proxy.via(env.postgresUrl), MELD_POSTGRES_REQUEST_TIMEOUT_MS: '2000' }));
  }, 60_000);
  afterAll(async () => {
    proxy?.unpause();
    await app?.close();
    await direct?.app.close();
    await proxy?.stop();
  });

  async function read(t: Awaited<ReturnType<typeof seedTenancy>>, path: string) {
    const url = `/v1/project/${t.project.uid}${path}`;
    const started = Date.now();
    const res = await fetch(`${base}${url}`, { headers: principalHeader(t, { scopes: ['PROJECT_AUDIENCE_READ'] }, { app: 'audience', url }), signal: AbortSignal.timeout(20_000) });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { message?: string }, ms: Date.now() - started };
  }
  const unavailable = { status: 503, retryAfter: '5', body: expect.objectContaining({ message: 'Postgres did not answer: retry later' }) };

  it('Postgres refusing connections: 503 with Retry-After; answered again once it is back', async () => {
    const t = await seedTenancy(direct.db, 'pg-outage');
    expect((await read(t, '/segment')).status).toBe(200);
    await proxy.stop();
    try {
      for (const path of ['/segment', '/datasource']) expect(await read(t, path)).toMatchObject(unavailable);
    } finally {
      await proxy.resume();
    }
    expect((await read(t, '/segment')).status).toBe(200);
  });

  it('Postgres silent (connections open, no answer): 503 within the bound, not a held request', async () => {
    const t = await seedTenancy(direct.db, 'pg-stall');
    expect((await read(t, '/segment')).status).toBe(200);
    proxy.pause();
    try {
      // The open connection's statement (2 s), then a new connection's handshake (5 s): each within its bound.
      for (const path of ['/segment', '/datasource']) {
        const res = await read(t, path);
        expect(res).toMatchObject(unavailable);
        expect(res.ms).toBeLessThan(8_000);
      }
    } finally {
      proxy.unpause();
    }
    expect((await read(t, '/segment')).status).toBe(200);
  }, 40_000);
});

import type { Json } from '@meld/fixtures';
import { TcpProxy, testEnv } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { startIngestWithTenancy } from './app.fixture';

/**
 * A contact write while ingest's Postgres is cut or stalled (a TcpProxy in front of the test
 * database): a 503 with Retry-After within the request bound, never a 500 or a request held for
 * as long as Postgres is silent, and nothing acknowledged is stored: the contact is absent until
 * the client's retry, once Postgres is back, stores it (ADR 0360).
 */
describe('ingest contact writes while Postgres is down or stalled (TCP proxy)', () => {
  let proxy: TcpProxy;
  let app: INestApplication;
  let base: string;
  let db: DataSource;
  let started: Awaited<ReturnType<typeof startIngestWithTenancy>>;

  beforeAll(async () => {
    const postgresUrl = testEnv().postgresUrl;
    proxy = await TcpProxy.start(postgresUrl);
    started = await startIngestWithTenancy({ MELD_POSTGRES_URL: proxy.via(postgresUrl), MELD_POSTGRES_REQUEST_TIMEOUT_MS: '2000' });
    ({ app, base, db } = started);
  }, 60_000);
  afterAll(async () => {
    proxy?.unpause();
    await app?.close();
    await proxy?.stop();
  });

  const post = async (userId: string) => {
    const { tenancy, dsToken } = started;
    const url = `${base}/v1/project/${tenancy.project.uid}/datasource/${tenancy.dataSource.id}/stream/contacts`;
    const begun = Date.now();
    const res = await fetch(url, { method: 'POST', headers: { ...dsToken('POST', url), 'content-type': 'application/json' }, body: JSON.stringify([{ _user_id: userId, tier: 'gold' }]), signal: AbortSignal.timeout(20_000) });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Json, ms: Date.now() - begun };
  };
  const stored = async (userId: string) =>
    (await db.query(`SELECT 1 FROM source_contacts WHERE project_id = $1 AND data_source_id = $2 AND user_id = $3`, [started.tenancy.project.id, started.tenancy.dataSource.id, userId])).length;
  const unavailable = { status: 503, retryAfter: '5', message: 'Postgres did not answer: retry later' };

  async function refusedThenStored(userId: string, outage: { start(): unknown; end(): unknown }) {
    expect((await post(`${userId}-warm`)).status).toBe(202);
    await outage.start();
    let refused;
    try {
      refused = await post(userId);
    } finally {
      await outage.end();
    }
    expect({ status: refused.status, retryAfter: refused.retryAfter, message: refused.body.message }).toEqual(unavailable);
    expect(refused.ms).toBeLessThan(8_000);
    expect(await stored(userId)).toBe(0);
    expect((await post(userId)).status).toBe(202);
    expect(await stored(userId)).toBe(1);
  }

  it('Postgres refusing connections: 503 with Retry-After, nothing stored; the retry stores the contact', async () => {
    await refusedThenStored('pg-cut', { start: () => proxy.stop(), end: () => proxy.resume() });
  }, 40_000);

  it('Postgres silent (connections open, no answer): 503 within the bound, nothing stored; the retry stores the contact', async () => {
    await refusedThenStored('pg-stall', { start: () => proxy.pause(), end: () => proxy.unpause() });
  }, 40_000);
});

import type { Json } from '@meld/fixtures';
import { operationsWithoutPostgres503, TcpProxy, testEnv } from '@meld/testing';
import type { INestApplication } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { approvedCode, form, pkcePair, register, seedUser, startOAuth } from './app.fixture';

const REDIRECT = 'http://127.0.0.1:9999/callback';

/**
 * The token endpoint while Postgres is cut or stalled (a TcpProxy in front of the test
 * database): a 503 with Retry-After within the request bound, never a 500 or a request held for
 * as long as Postgres is silent; the refresh token is not spent, so the client's retry once
 * Postgres is back gets its tokens (ADR 0360).
 */
describe('oauth token endpoint while Postgres is down or stalled (TCP proxy)', () => {
  let proxy: TcpProxy;
  let app: INestApplication;
  let base: string;
  let db: DataSource;

  beforeAll(async () => {
    const postgresUrl = testEnv().postgresUrl;
    proxy = await TcpProxy.start(postgresUrl);
    ({ app, base, db } = await startOAuth({ MELD_POSTGRES_URL: proxy.via(postgresUrl), MELD_POSTGRES_REQUEST_TIMEOUT_MS: '2000' }));
  }, 60_000);
  afterAll(async () => {
    proxy?.unpause();
    await app?.close();
    await proxy?.stop();
  });

  async function refreshToken() {
    const t = await seedUser(db);
    const c = (await register(base, { client_name: 'Outage app', redirect_uris: [REDIRECT] })).body;
    const { verifier, challenge } = pkcePair();
    const { code } = await approvedCode(db, t, c.client_id, REDIRECT, challenge);
    const res = await form(base, '/oauth/token', { grant_type: 'authorization_code', redirect_uri: REDIRECT, client_id: c.client_id, code, code_verifier: verifier });
    expect(res.status).toBe(200);
    return { clientId: c.client_id as string, refresh: res.body.refresh_token as string };
  }
  const refresh = async (clientId: string, token: string) => {
    const begun = Date.now();
    const res = await form(base, '/oauth/token', { grant_type: 'refresh_token', client_id: clientId, refresh_token: token });
    return { ...res, ms: Date.now() - begun };
  };

  async function refusedThenIssued(outage: { start(): unknown; end(): unknown }) {
    const { clientId, refresh: token } = await refreshToken();
    await outage.start();
    let refused;
    try {
      refused = await refresh(clientId, token);
    } finally {
      await outage.end();
    }
    expect({ status: refused.status, retryAfter: refused.headers.get('retry-after'), message: refused.body.message }).toEqual({ status: 503, retryAfter: '5', message: 'Postgres did not answer: retry later' });
    expect(refused.ms).toBeLessThan(8_000);
    const retried = await refresh(clientId, token);
    expect(retried.status).toBe(200);
    expect(typeof retried.body.access_token).toBe('string');
  }

  it('Postgres refusing connections: 503 with Retry-After; the retry gets its tokens', async () => {
    await refusedThenIssued({ start: () => proxy.stop(), end: () => proxy.resume() });
  }, 40_000);

  it('Postgres silent (connections open, no answer): 503 within the bound; the retry gets its tokens', async () => {
    await refusedThenIssued({ start: () => proxy.pause(), end: () => proxy.unpause() });
  }, 40_000);

  it('its OpenAPI document lists the 503 with Retry-After on every route that reads or writes Postgres; discovery reads only its configuration', async () => {
    const doc: Json = await (await fetch(`${base}/openapi.json`)).json();
    const discovery = ['GET /.well-known/oauth-authorization-server', 'GET /.well-known/oauth-protected-resource', 'GET /.well-known/oauth-protected-resource/v1'];
    expect(operationsWithoutPostgres503(doc, discovery)).toEqual([]);
    for (const name of discovery) expect([name, doc.paths[name.slice(4)].get.responses['503']]).toEqual([name, undefined]);
  });
});

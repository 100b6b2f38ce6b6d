import { connect } from 'node:net';
import { principalHeader, seedTenancy } from '@meld/fixtures';
import { TcpProxy, testEnv } from '@meld/testing';
import { startReadiness } from './app.fixture';

/**
 * An app stopping (SIGTERM, app.close()) while a request is in flight on a kept-alive
 * connection (the gateway's pools keep theirs open) answers it, closes that connection once it
 * is idle and is done: it waited for the caller to close the connection, up to the 65 s
 * keep-alive, past the pods' 30 s terminationGracePeriodSeconds (ADR 0004). Postgres stalled
 * behind a TcpProxy holds the request until the request bound.
 */
describe('readiness stopping with a request in flight', () => {
  const env = testEnv();
  let proxy: TcpProxy;

  beforeAll(async () => {
    proxy = await TcpProxy.start(env.postgresUrl);
  });
  afterAll(async () => {
    proxy?.unpause();
    await proxy?.stop();
  });

  it('answers it, closes the connection once idle and stops within the request’s time, not the keep-alive’s', async () => {
    const { app, base, db } = await startReadiness({ MELD_POSTGRES_URL: proxy.via(env.postgresUrl), MELD_POSTGRES_REQUEST_TIMEOUT_MS: '1500' });
    let closed: Promise<void> | undefined;
    try {
      const t = await seedTenancy(db);
      const url = `/v1/project/${t.project.uid}/readiness`;
      const headers = Object.entries(principalHeader(t, {}, { app: 'readiness', url })).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      const socket = connect(Number(new URL(base).port), '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString('latin1')));
      const socketClosed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
      await new Promise((resolve) => socket.once('connect', resolve));
      proxy.pause();
      socket.write(`GET ${url} HTTP/1.1\r\nHost: readiness\r\n${headers}\r\n`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stopping = Date.now();
      closed = app.close();
      const answered = async () => {
        while (!/\r\n\r\n/.test(received) && Date.now() - stopping < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
      };
      await answered();
      // The stores close once the HTTP server has: let the stalled connections go.
      proxy.unpause();
      const outcome = await Promise.race([closed.then(() => 'stopped'), new Promise((resolve) => setTimeout(() => resolve('still stopping after 10 s'), 10_000))]);
      expect(received).toMatch(/^HTTP\/1\.1 503 /);
      expect(outcome).toBe('stopped');
      // The server's close reaches this socket as a FIN read on a later turn of the loop (a loaded machine: later still).
      expect(await Promise.race([socketClosed, new Promise((resolve) => setTimeout(() => resolve(false), 2000))])).toBe(true);
      socket.destroy();
    } finally {
      proxy.unpause();
      await (closed ?? app.close());
    }
  }, 120_000);
});

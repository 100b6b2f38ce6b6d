import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { Upstreams } from '../src/public-api/proxy/upstreams';
import { forward } from '../src/public-api/proxy/forward';

// An app that stops (SIGTERM on a rollout) closes its idle keep-alive connections at once
// (ADR 0004): a request the gateway's pool sent on one of them just then is lost unanswered, the
// app never having read it. A GET or HEAD is sent again on a new connection (RFC 9110 §9.2.2);
// a write is not, since the gateway cannot tell that from an app that died while serving it.
describe('gateway → app hop when the app closes a kept-alive connection', () => {
  let upstream: Server;
  let gateway: FastifyInstance;
  let upstreams: Upstreams;
  let base: string;
  const seen: string[] = [];

  beforeAll(async () => {
    const requestsOn = new WeakMap<object, number>();
    upstream = createServer((req, res) => {
      const n = (requestsOn.get(req.socket) ?? 0) + 1;
      requestsOn.set(req.socket, n);
      seen.push(`${req.method} ${req.url} #${n}`);
      // The connection's second request finds it closed, as at a stopping app.
      if (n === 2) return void req.socket.destroy();
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }).end('{}'));
    });
    upstream.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreams = new Upstreams({ audience: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` } as ConstructorParameters<typeof Upstreams>[0]);
    gateway = Fastify();
    gateway.removeAllContentTypeParsers();
    gateway.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    const pass = (request: Parameters<typeof forward>[1], reply: Parameters<typeof forward>[2]) =>
      forward(upstreams.pool('audience'), request, reply, {}, 1024).catch(() => reply.code(502).send({ statusCode: 502 }));
    gateway.get('/*', pass);
    gateway.post('/*', pass);
    await gateway.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await gateway?.close();
    await upstreams?.close();
    upstream?.close();
  });
  beforeEach(() => void (seen.length = 0));

  it('sends a GET again on a new connection and answers it', async () => {
    expect((await fetch(`${base}/v1/first`)).status).toBe(200);
    const res = await fetch(`${base}/v1/second`);
    expect([res.status, await res.text()]).toEqual([200, '{}']);
    expect(seen).toEqual(['GET /v1/first #1', 'GET /v1/second #2', 'GET /v1/second #1']);
  });

  it('does not send a write twice: it fails as the app left it', async () => {
    const post = (path: string) => fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect((await post('/v1/write-1')).status).toBe(200);
    expect((await post('/v1/write-2')).status).toBe(502);
    expect(seen).toEqual(['POST /v1/write-1 #1', 'POST /v1/write-2 #2']);
  });
});

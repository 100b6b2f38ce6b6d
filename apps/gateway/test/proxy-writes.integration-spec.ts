import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { Upstreams } from '../src/public-api/proxy/upstreams';
import { forward } from '../src/public-api/proxy/forward';

// One hop of the proxy over real sockets (ADR 0257): a small answer reaches the client in one
// write even when the app wrote it in pieces, a small request body reaches the app in one
// write with its headers (ADR 0290), and the gateway keeps one connection to the app across
// requests. Syscalls are CPU on a box where both ends share the cores.
describe('gateway → app hop', () => {
  let upstream: Server;
  let gateway: FastifyInstance;
  let upstreams: Upstreams;
  let port: number;
  let upstreamConnections = 0;
  const large = 'x'.repeat(200 * 1024);
  /** Every read of the app's sockets, in order, and the bodies of the POSTs it answered. */
  const upstreamReads: Buffer[] = [];
  const posted: string[] = [];

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      if (req.method === 'POST') {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          posted.push(Buffer.concat(chunks).toString());
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }).end('{}');
        });
        return;
      }
      if (req.url === '/cookies') {
        // Repeated answer headers reach the client each as its own line (the gateway reads undici's raw headers itself, ADR 0270).
        res.writeHead(200, ['set-cookie', 'a=1', 'set-cookie', 'b=2', 'content-type', 'text/plain', 'content-length', '2', 'x-request-id', 'from-the-app']);
        return res.end('ok');
      }
      if (req.url === '/hop') {
        // A connection-level header of this hop, named by Connection as RFC 9110 §7.6.1 has it; the headers the app got, as its body.
        const seen = JSON.stringify(req.headers);
        res.writeHead(200, ['connection', 'keep-alive, x-app-hop', 'x-app-hop', 'app-secret', 'x-app-kept', '1', 'content-type', 'application/json', 'content-length', String(seen.length)]);
        return res.end(seen);
      }
      if (req.url === '/large') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(large.length) });
        return res.end(large);
      }
      // Headers, then the body in two pieces: three writes on the app's side.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '18' });
      res.flushHeaders();
      res.write('{"entity":');
      setTimeout(() => res.end('{"a":1}}'), 20);
    });
    upstream.keepAliveTimeout = 65_000;
    upstream.on('connection', (socket) => {
      upstreamConnections++;
      socket.on('data', (chunk: Buffer) => upstreamReads.push(chunk));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    upstreams = new Upstreams({ audience: url } as ConstructorParameters<typeof Upstreams>[0]);
    gateway = Fastify();
    // As the public API registers its routes: the body is the raw request stream, never parsed.
    gateway.removeAllContentTypeParsers();
    gateway.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    gateway.get('/*', (request, reply) => forward(upstreams.pool('audience'), request, reply, {}, 1024));
    gateway.post('/*', (request, reply) => forward(upstreams.pool('audience'), request, reply, {}, 1024 * 1024));
    await gateway.listen({ port: 0, host: '127.0.0.1' });
    port = (gateway.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await gateway?.close();
    await upstreams?.close();
    upstream?.close();
  });

  /** The raw chunks one keep-alive client socket receives for each of `paths`, one request at a time. */
  async function chunksOf(paths: string[], expectedBytes: (i: number) => number): Promise<Buffer[][]> {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const answers: Buffer[][] = [];
    for (const [i, path] of paths.entries()) {
      const chunks: Buffer[] = [];
      await new Promise<void>((resolve) => {
        const onData = (chunk: Buffer) => {
          chunks.push(chunk);
          const text = Buffer.concat(chunks).toString('latin1');
          const head = text.indexOf('\r\n\r\n');
          if (head >= 0 && Buffer.byteLength(text.slice(head + 4), 'latin1') >= expectedBytes(i)) {
            socket.off('data', onData);
            resolve();
          }
        };
        socket.on('data', onData);
        socket.write(`GET ${path} HTTP/1.1\r\nhost: gateway\r\n\r\n`);
      });
      answers.push(chunks);
    }
    socket.destroy();
    return answers;
  }

  it('sends a small answer, headers and body, in one write, whatever pieces the app wrote it in', async () => {
    const answers = await chunksOf(['/v1/a', '/v1/b', '/v1/c'], () => 18);
    for (const chunks of answers) {
      expect(chunks).toHaveLength(1);
      expect(chunks[0]!.toString()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*content-length: 18\r\n[\s\S]*\r\n\r\n\{"entity":\{"a":1\}\}$/);
    }
  });

  it('passes repeated answer headers through and keeps the gateway-owned ones its own', async () => {
    const [chunks] = await chunksOf(['/cookies'], () => 2);
    const text = Buffer.concat(chunks!).toString();
    expect(text).toMatch(/\r\nset-cookie: a=1\r\n(.*\r\n)*set-cookie: b=2\r\n/i);
    expect(text).not.toContain('from-the-app');
    expect(text.endsWith('\r\n\r\nok')).toBe(true);
  });

  it('drops the headers a Connection header names (RFC 9110 §7.6.1), the client\'s before the app and the app\'s before the client', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let answer = '';
    await new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString('latin1');
        if (answer.endsWith('}')) resolve();
      });
      socket.write('GET /hop HTTP/1.1\r\nhost: gateway\r\nconnection: keep-alive, X-Client-Hop , x-other-hop\r\nx-client-hop: 1\r\nx-other-hop: 2\r\nx-client-kept: 3\r\n\r\n');
    });
    socket.destroy();
    const [head, body] = answer.split('\r\n\r\n');
    const seen = JSON.parse(body!) as Record<string, string>;
    expect([seen['x-client-hop'], seen['x-other-hop'], seen['x-client-kept']]).toEqual([undefined, undefined, '3']);
    expect(head).not.toMatch(/x-app-hop|app-secret/i);
    expect(head).toMatch(/\r\nx-app-kept: 1\r\n/i);
  });

  it('keeps one connection to the app across requests, and streams a large answer whole', async () => {
    const before = upstreamConnections;
    const answers = await chunksOf(['/v1/a', '/large', '/v1/b', '/v1/c', '/large'], (i) => (i === 1 || i === 4 ? large.length : 18));
    expect(upstreamConnections - before).toBeLessThanOrEqual(1);
    const body = Buffer.concat(answers[1]!).toString();
    expect(body.slice(body.indexOf('\r\n\r\n') + 4)).toBe(large);
  });

  /** Sends a POST with a content-length on its own socket, its body in `pieces` written one by one, `between` run after each piece but the last. */
  async function post(pieces: string[], between: () => Promise<void> = () => new Promise((r) => setTimeout(r, 30))): Promise<string> {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const length = pieces.reduce((n, p) => n + p.length, 0);
    let answer = '';
    const answered = new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString('latin1');
        if (/\r\n\r\n\{\}$/.test(answer)) resolve();
      });
    });
    socket.write(`POST /v1/posted HTTP/1.1\r\nhost: gateway\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`);
    for (const [i, piece] of pieces.entries()) {
      socket.write(piece);
      if (i < pieces.length - 1) await between();
    }
    await answered;
    socket.destroy();
    return answer;
  }

  it('sends a small request body to the app in one write with its headers, whatever pieces the client sent it in', async () => {
    const from = upstreamReads.length;
    const answer = await post(['{"a":', '1,"b":', '2}']);
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(posted[posted.length - 1]).toBe('{"a":1,"b":2}');
    const reads = upstreamReads.slice(from);
    expect(reads).toHaveLength(1);
    const text = reads[0]!.toString();
    expect(text.startsWith('POST /v1/posted HTTP/1.1\r\n')).toBe(true);
    expect(text).toContain('\r\ncontent-length: 13\r\n');
    expect(text.endsWith('\r\n\r\n{"a":1,"b":2}')).toBe(true);
  });

  it('streams a large request body: the app reads its start before the client has sent the rest', async () => {
    const first = 'y'.repeat(100 * 1024);
    const rest = 'z'.repeat(100 * 1024);
    const from = upstreamReads.length;
    const bytesAtApp = () => upstreamReads.slice(from).reduce((n, c) => n + c.length, 0);
    let early = false;
    // The client holds its second half back until the app has read the first (or gives up after 5 s: the test then fails below).
    const answer = await post([first, rest], async () => {
      const deadline = Date.now() + 5000;
      while (bytesAtApp() < first.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      early = bytesAtApp() >= first.length;
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(posted[posted.length - 1]).toBe(first + rest);
    expect(early).toBe(true);
  });

  it('sends nothing to the app when the client goes away before its small body is complete, and goes on serving', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const count = posted.length;
    socket.write('POST /v1/cut HTTP/1.1\r\nhost: gateway\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"half":');
    await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect(posted.length).toBe(count);
    expect(await post(['{"after":true}'])).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(posted[posted.length - 1]).toBe('{"after":true}');
  });
});

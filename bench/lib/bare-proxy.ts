/**
 * The gateway bench's proxy floor (ADR 0271): the least a Node process can do to pass a request
 * on to another process and its answer back, with the gateway's own transport (node:http in,
 * a keep-alive undici pool out, small answers buffered and written with their headers). No
 * Fastify, no Nest, no token, rate limit, principal, request id, metrics or logs. Put in front of
 * the bare Fastify floor, its CPU per request is what any Node proxy hop costs on this box.
 * Run as its own process (`node -r @swc-node/register bench/lib/bare-proxy.ts`) with PORT and
 * BARE_PROXY_UPSTREAM (the origin it forwards to).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { Pool, type Dispatcher } from 'undici';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'te', 'trailer', 'upgrade', 'expect']);

function copy(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

const upstream = new Pool(process.env.BARE_PROXY_UPSTREAM!, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });

const server = createServer((req, res) => {
  const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  upstream
    .request({ method: req.method as Dispatcher.HttpMethod, path: req.url!, headers: copy(req.headers), body: hasBody ? req : null })
    .then(async (answer) => {
      const body = Buffer.from(await answer.body.arrayBuffer());
      res.writeHead(answer.statusCode, copy(answer.headers));
      res.end(body);
    })
    .catch(() => {
      res.writeHead(502);
      res.end();
    });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => void upstream.close().then(() => process.exit(0))));

import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When its headers arrived (ms since epoch): where an app starts a principal's age (ADR 0102). */
  at: number;
}

/**
 * Stands in for an internal app: records each request and answers 200 with what it saw
 * (or what `respond` says), so a test can check exactly what the gateway forwarded.
 */
export async function startStubUpstream(respond?: (req: SeenRequest) => { status: number; body: unknown; headers?: Record<string, string> }) {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at };
      seen.push(request);
      const answer = respond?.(request) ?? { status: 200, body: { seen: { method: request.method, url: request.url, bytes: request.body.length } } };
      res.writeHead(answer.status, { 'content-type': 'application/json', 'x-request-id': 'upstream-must-not-leak', ...answer.headers });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    seen,
    last: () => seen[seen.length - 1],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

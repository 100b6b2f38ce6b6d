import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// tools/ is plain CommonJS outside the Nx graph.
const { whatIsDown } = require('./apps');

describe('meld start: what is down when the apps are not ready', () => {
  it("reads the gateway's operations port, which names the apps and stores that are down (the public /healthz is bare)", async () => {
    const detail = JSON.stringify({ status: 'error', error: { audience: { status: 'down', message: 'clickhouse: connect ECONNREFUSED' } } });
    const ops = createServer((req, res) => res.writeHead(req.url === '/healthz' ? 503 : 404).end(detail));
    await new Promise<void>((resolve) => ops.listen(0, '127.0.0.1', resolve));
    try {
      expect(await whatIsDown((ops.address() as AddressInfo).port, '{"status":"error"}')).toBe(detail);
    } finally {
      ops.close();
    }
  });

  it('falls back to the last public answer when the operations port does not answer', async () => {
    expect(await whatIsDown(9, '{"status":"error"}')).toBe('{"status":"error"}');
  });
});

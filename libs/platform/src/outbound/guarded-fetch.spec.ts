import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedFetch } from './guarded-fetch';
import { isPrivateAddress } from './private-address';

const GUARDED = { maxBytes: 1024, timeoutMs: 2000, allowPrivate: false };
const LOCAL = { ...GUARDED, allowPrivate: true };

describe('isPrivateAddress', () => {
  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a00:1', 'localhost', ''])('refuses %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });
  it.each(['93.184.215.14', '8.8.8.8', '2606:4700::1111', '172.32.0.1'])('allows %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});

describe('guardedFetch refusals (no connection is made)', () => {
  it.each([
    ['http://example.com/doc', 'must use https'],
    ['ftp://example.com/doc', 'must use https'],
    ['not a url', 'not an absolute URL'],
    ['https://127.0.0.1/doc', 'targets a private'],
    ['https://169.254.169.254/latest/meta-data', 'targets a private'],
    ['https://[::1]/doc', 'targets a private'],
    ['https://[::ffff:127.0.0.1]/doc', 'targets a private'],
    ['https://localhost/doc', 'localhost resolves to a private'],
  ])('%s: %s', async (url, reason) => {
    await expect(guardedFetch(url, GUARDED)).rejects.toThrow(reason);
  });
});

describe('guardedFetch with private targets allowed (local stack)', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/big') return res.end('x'.repeat(5000));
      if (req.url === '/chunked') {
        res.write('x'.repeat(800));
        return setTimeout(() => res.end('x'.repeat(800)), 10);
      }
      if (req.url === '/slow') return setTimeout(() => res.end('late'), 3000);
      if (req.url === '/moved') return res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('reads a small answer, through the checked lookup too', async () => {
    expect(await guardedFetch(`${base}/doc`, LOCAL)).toMatchObject({ status: 200, body: '{"ok":true}' });
    const port = new URL(base).port;
    expect((await guardedFetch(`http://localhost:${port}/doc`, LOCAL)).status).toBe(200);
  });

  it('bounds size (declared or streamed), time, and never follows a redirect', async () => {
    await expect(guardedFetch(`${base}/big`, LOCAL)).rejects.toThrow('larger than 1024 bytes');
    await expect(guardedFetch(`${base}/chunked`, LOCAL)).rejects.toThrow('larger than 1024 bytes');
    await expect(guardedFetch(`${base}/slow`, { ...LOCAL, timeoutMs: 200 })).rejects.toThrow('within 200 ms');
    expect(await guardedFetch(`${base}/moved`, LOCAL)).toMatchObject({ status: 302, body: '' });
  });
});

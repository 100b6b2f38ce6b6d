import { guardedLookup, isPrivateAddress } from './webhook-target';

describe('isPrivateAddress (ADR 0156)', () => {
  it.each([
    '127.0.0.1', '127.9.9.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.51.100.7', '203.0.113.255', '2001:db8::1', '::ffff:203.0.113.9',
    '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'not-an-ip',
  ])('refuses %s', (address) => expect(isPrivateAddress(address)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '192.0.3.1', '203.0.114.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => expect(isPrivateAddress(address)).toBe(false));
});

describe('guardedLookup', () => {
  const lookup = (host: string) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) => guardedLookup(host, {}, (err, address) => resolve({ err, address })));

  it('refuses a name that resolves to loopback', async () => {
    const { err } = await lookup('localhost');
    expect(err?.message).toMatch(/localhost is a private or loopback address/);
  });
});

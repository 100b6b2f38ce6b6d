import { TcpProxy, testEnv, waitFor } from '@meld/testing';
import type Redis from 'ioredis';
import { createRedisClient } from '../src/redis/redis-client';

const TIMEOUT_MS = 200;

/** Holds the event loop, as a long GC or a throttled CPU does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: nothing else of this process runs meanwhile
  }
}

// Request clients' command timeout (ADRs 0122, 0340), against the stack's Redis.
describe('a request Redis client', () => {
  const env = testEnv();
  let direct: Redis;
  let proxy: TcpProxy;
  let proxied: Redis;

  beforeAll(async () => {
    direct = createRedisClient(env.redisUrl, { name: 'meld-test-request-direct', role: 'request', timeoutMs: TIMEOUT_MS });
    // The proxy runs in this process: only the stalled-Redis test goes through it.
    proxy = await TcpProxy.start(env.redisUrl);
    proxied = createRedisClient(proxy.via(env.redisUrl), { name: 'meld-test-request-proxied', role: 'request', timeoutMs: TIMEOUT_MS });
    await waitFor('both clients ready', async () => direct.status === 'ready' && proxied.status === 'ready');
  });

  afterAll(async () => {
    proxy?.unpause();
    direct?.disconnect();
    proxied?.disconnect();
    await proxy?.stop();
  });

  it('gets the reply Redis sent while this process stalled longer than the timeout', async () => {
    // ioredis's own commandTimeout rejects this one: the next turn of the loop runs its timer
    // before it reads the socket. Started from the check phase (as from an I/O callback), so the
    // stall ends the turn; from a timer callback, libuv would read the socket in the same turn.
    await new Promise((resolve) => setImmediate(resolve));
    const replies = [direct.ping(), direct.set(`meld-test-stall-${process.pid}`, '1', 'EX', 10), direct.get(`meld-test-stall-${process.pid}`)];
    stall(3 * TIMEOUT_MS);
    await expect(Promise.all(replies)).resolves.toEqual(['PONG', 'OK', '1']);
  });

  it('still fails a command that Redis does not answer, after about the timeout', async () => {
    proxy.pause();
    const started = Date.now();
    await expect(proxied.ping()).rejects.toThrow('Command timed out');
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(waited).toBeLessThan(TIMEOUT_MS + 1500);
    proxy.unpause();
    await expect(proxied.ping()).resolves.toBe('PONG');
  });
});

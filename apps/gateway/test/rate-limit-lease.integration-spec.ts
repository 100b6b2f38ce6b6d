import { randomUUID } from 'node:crypto';
import { testEnv } from '@meld/testing';
import Redis from 'ioredis';
import { resolveRateLimits } from '../src/public-api/rate-limit/limits';
import { type Bucket, RateLimiter, RateLimitUnavailable, leaseSize } from '../src/public-api/rate-limit/rate-limiter';
import { awayFromWindowEdge } from './support/window-edge';

// The gateway's Redis rate limit spent through local leases (ADR 0207), on the real Redis:
// exact for one replica, never over the limit for several, a stranded-quota tolerance of
// leaseSize - 1 per replica, and one Redis call per lease instead of per request.
describe('rate limiter leases', () => {
  const LIMIT = 1000;
  const limits = resolveRateLimits(JSON.stringify({ large: { limit: LIMIT }, standard: { limit: 3, windowSeconds: 1 } }));
  const bucket: Bucket = { cls: 'large', subject: 'org:lease-spec', plan: 's' };
  const clients: Redis[] = [];
  /** A replica: its own Redis connection, counting the commands it sends. */
  const replica = (namespace: string) => {
    const redis = new Redis(testEnv().redisUrl, { enableOfflineQueue: true, maxRetriesPerRequest: 0 });
    clients.push(redis);
    const counted = { calls: 0, limiter: new RateLimiter(redis, limits, namespace) };
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
      counted.calls++;
      return send(...args);
    }) as Redis['sendCommand'];
    return counted;
  };

  afterAll(() => clients.forEach((c) => c.disconnect()));

  it('one replica: exactly the limit, remaining counted down by one, one Redis call per lease', async () => {
    const one = replica(`lease-spec-${randomUUID()}`);
    await awayFromWindowEdge(60_000, 5_000); // every hit below in one window of the minute class
    const states = [];
    for (let i = 0; i < LIMIT + 5; i++) states.push(await one.limiter.hit(bucket));
    expect(states.filter((s) => s.allowed)).toHaveLength(LIMIT);
    expect(states.slice(0, LIMIT).map((s) => s.remaining)).toEqual(Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i));
    expect(states.slice(LIMIT).every((s) => !s.allowed && s.remaining === 0)).toBe(true);
    expect(new Set(states.map((s) => s.reset)).size).toBe(1);
    expect(one.calls).toBeLessThanOrEqual(Math.ceil(LIMIT / leaseSize(LIMIT)) + 5);
    const calls = one.calls;
    for (let i = 0; i < 50; i++) expect((await one.limiter.hit(bucket)).allowed).toBe(false);
    expect(one.calls).toBe(calls); // a used-up bucket is refused from memory
  });

  it('concurrent requests share one renewal', async () => {
    const one = replica(`lease-spec-${randomUUID()}`);
    const states = await Promise.all(Array.from({ length: 200 }, () => one.limiter.hit(bucket)));
    expect(states.every((s) => s.allowed)).toBe(true);
    // + a few: the connection's own commands and the script's first EVAL after NOSCRIPT.
    expect(one.calls).toBeLessThanOrEqual(Math.ceil(200 / leaseSize(LIMIT)) + 5);
  });

  it('several replicas: never more than the limit, at most leaseSize - 1 stranded per replica', async () => {
    const namespace = `lease-spec-${randomUUID()}`;
    const replicas = [replica(namespace), replica(namespace), replica(namespace)];
    let allowed = 0;
    await awayFromWindowEdge(60_000, 5_000);
    for (let i = 0; i < LIMIT + 100; i++) if ((await replicas[i % 3]!.limiter.hit(bucket)).allowed) allowed++;
    expect(allowed).toBeLessThanOrEqual(LIMIT);
    expect(allowed).toBeGreaterThanOrEqual(LIMIT - replicas.length * (leaseSize(LIMIT) - 1));
  });

  it('small limits lease one unit: exact across replicas, and a new window starts afresh', async () => {
    const namespace = `lease-spec-${randomUUID()}`;
    const [a, b] = [replica(namespace), replica(namespace)];
    const small: Bucket = { cls: 'standard', subject: 'org:small', plan: 's' };
    const first = await a.limiter.hit(small);
    // Start at the beginning of a window, so the three hits below share it.
    await new Promise((r) => setTimeout(r, first.reset * 1000 - Date.now() + 20));
    const answers = [await a.limiter.hit(small), await b.limiter.hit(small), await a.limiter.hit(small), await b.limiter.hit(small)];
    expect(answers.map((s) => [s.allowed, s.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    await new Promise((r) => setTimeout(r, answers[0]!.reset * 1000 - Date.now() + 20));
    expect(await b.limiter.hit(small)).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('keeps at most maxLeases buckets in memory, still never over the limit', async () => {
    const redis = new Redis(testEnv().redisUrl, { maxRetriesPerRequest: 0 });
    clients.push(redis);
    const limiter = new RateLimiter(redis, limits, `lease-spec-${randomUUID()}`, Date.now, 2);
    const buckets = ['a', 'b', 'c'].map((s): Bucket => ({ cls: 'large', subject: `org:${s}`, plan: 's' }));
    const allowed = buckets.map(() => 0);
    for (let i = 0; i < LIMIT + 30; i++) for (const [n, b] of buckets.entries()) if ((await limiter.hit(b)).allowed) allowed[n]!++;
    // Worst case, a table always full: each renewal drops the bucket renewed longest ago with its
    // unspent units, so a bucket may get as little as one request per lease, never more than its limit.
    for (const n of allowed) expect(n).toBeLessThanOrEqual(LIMIT);
    expect(Math.min(...allowed)).toBeGreaterThanOrEqual(LIMIT / leaseSize(LIMIT));
  });

  it('a renewal Redis does not answer is RateLimitUnavailable (the caller answers 503)', async () => {
    const redis = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    const limiter = new RateLimiter(redis, limits, 'lease-spec-down');
    await expect(limiter.hit(bucket)).rejects.toBeInstanceOf(RateLimitUnavailable);
    redis.disconnect();
  });
});

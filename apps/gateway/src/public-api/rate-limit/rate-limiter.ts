import type { Plan } from '@meld/contracts';
import type Redis from 'ioredis';
import type { LimitClass, RateLimits } from './limits';

/**
 * Fixed window counter, one atomic script per request: INCR the counter of the current
 * window (created with an expiry), return the count and the window end. The window is
 * aligned on Redis's clock (TIME), so every gateway replica agrees on when it resets and
 * `X-RateLimit-Reset` is exact. The counter key carries a hash tag, so the per-window key
 * the script derives lives in the slot of the key it declares (Redis Cluster safe).
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local start = now - (now % window)
local key = KEYS[1] .. ':' .. start
local n = redis.call('INCR', key)
if n == 1 then redis.call('PEXPIRE', key, window + 1000) end
return {n, start + window}
`;

export interface Bucket {
  cls: LimitClass;
  /** Who is counted: `ip:<addr>`, `org:<id>`, or `ds:<id>:<route>` for ingest. */
  subject: string;
  plan: Plan;
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds at which the window resets. */
  reset: number;
  /** Window length in seconds. */
  window: number;
  allowed: boolean;
}

/** Redis did not answer: the caller refuses the request (503), never lets it through. */
export class RateLimitUnavailable extends Error {}

type WithScript = Redis & { meldRateLimit(key: string, windowMs: number): Promise<[number, number]> };

export class RateLimiter {
  private readonly redis: WithScript;

  constructor(
    redis: Redis,
    private readonly limits: RateLimits,
    private readonly namespace: string,
  ) {
    redis.defineCommand('meldRateLimit', { numberOfKeys: 1, lua: SCRIPT });
    this.redis = redis as WithScript;
  }

  limitOf(bucket: Pick<Bucket, 'cls' | 'plan'>): number {
    return this.limits[bucket.cls].perPlan[bucket.plan];
  }

  async hit(bucket: Bucket): Promise<RateLimitState> {
    const { windowMs } = this.limits[bucket.cls];
    let count: number;
    let resetMs: number;
    try {
      [count, resetMs] = await this.redis.meldRateLimit(`${this.namespace}:rl:{${bucket.cls}:${windowMs}:${bucket.subject}}`, windowMs);
    } catch (err) {
      throw new RateLimitUnavailable(`rate limiting unavailable: ${(err as Error).message}`);
    }
    const limit = this.limitOf(bucket);
    return { limit, remaining: Math.max(0, limit - count), reset: Math.ceil(resetMs / 1000), window: windowMs / 1000, allowed: count <= limit };
  }

  /** What to tell the client when Redis is down: nothing left in a window ending on our own clock. */
  unavailableState(bucket: Pick<Bucket, 'cls' | 'plan'>, now = Date.now()): RateLimitState {
    const { windowMs } = this.limits[bucket.cls];
    return { limit: this.limitOf(bucket), remaining: 0, reset: Math.ceil((now - (now % windowMs) + windowMs) / 1000), window: windowMs / 1000, allowed: false };
  }
}

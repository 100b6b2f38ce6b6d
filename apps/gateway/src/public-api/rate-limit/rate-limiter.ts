import { errorSummary, LoggableError, type Plan } from '@meld/contracts';
import type Redis from 'ioredis';
import type { LimitClass, RateLimits } from './limits';

/**
 * Fixed window counter in Redis, spent through local leases (ADR 0207): one atomic script
 * reserves up to `want` units of the current window for this replica (never past the limit)
 * and returns the count reserved so far, the window end and the time left in it. The window
 * is aligned on Redis's clock (TIME), so every gateway replica agrees on when it resets and
 * `X-RateLimit-Reset` is exact. The counter key carries a hash tag, so the per-window key
 * the script derives lives in the slot of the key it declares (Redis Cluster safe).
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local start = now - (now % window)
local key = KEYS[1] .. ':' .. start
local n = tonumber(redis.call('GET', key) or '0')
local grant = math.min(tonumber(ARGV[2]), tonumber(ARGV[3]) - n)
if grant > 0 then
  n = redis.call('INCRBY', key, grant)
  if n == grant then redis.call('PEXPIRE', key, window + 1000) end
else
  grant = 0
end
return {n, start + window, grant, start + window - now}
`;

/**
 * Units one lease reserves: 1% of the limit (at most 64), so a replica strands at most 1% of
 * a window's quota (ADR 0207); limits under 200 lease one unit, a Redis call per request as before.
 */
export function leaseSize(limit: number): number {
  return Math.min(64, Math.max(1, Math.floor(limit / 100)));
}

/** What this replica reserved in one bucket's current window. */
interface Lease {
  /** Units reserved and not spent yet. */
  left: number;
  /** Units reserved in the window by every replica, as of this lease. */
  reserved: number;
  /** Window end, Redis clock (unix ms): what the client is told. */
  resetMs: number;
  /** Window end on this process's clock: when the lease lapses. */
  expiresAt: number;
}

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

/**
 * Redis did not answer: the caller refuses the request (503), never lets it through. Logged whole:
 * its message names Redis's error by class and code only (ADR 0338).
 */
export class RateLimitUnavailable extends LoggableError {}

type WithScript = Redis & { meldRateLimitLease(key: string, windowMs: number, want: number, limit: number): Promise<[number, number, number, number]> };

/**
 * The per-organization, per-data-source and per-IP limits shared by every gateway replica.
 * Requests spend units of a local lease; Redis is called only to renew it, so a busy bucket
 * costs one Redis call per lease rather than per request, and a bucket that is used up costs
 * none until its window ends. Never admits more than the limit in a window; may refuse up to
 * `leaseSize(limit) - 1` requests early per replica (units another replica holds unspent).
 */
export class RateLimiter {
  private readonly redis: WithScript;
  private readonly leases = new Map<string, Lease>();
  private readonly renewing = new Map<string, Promise<void>>();
  private lastSweep = 0;

  constructor(
    redis: Redis,
    private readonly limits: RateLimits,
    private readonly namespace: string,
    private readonly now: () => number = Date.now,
    /** Buckets with a lease in memory (bucket keys come from client input, e.g. IPs); past it the oldest renewal is dropped. */
    private readonly maxLeases = 100_000,
  ) {
    redis.defineCommand('meldRateLimitLease', { numberOfKeys: 1, lua: SCRIPT });
    this.redis = redis as WithScript;
  }

  limitOf(bucket: Pick<Bucket, 'cls' | 'plan'>): number {
    return this.limits[bucket.cls].perPlan[bucket.plan];
  }

  async hit(bucket: Bucket): Promise<RateLimitState> {
    const { windowMs } = this.limits[bucket.cls];
    const limit = this.limitOf(bucket);
    const key = this.keyOf(bucket, windowMs);
    this.sweep();
    for (;;) {
      const state = this.spendLease(key, limit, windowMs);
      if (state) return state;
      await this.renew(key, windowMs, limit);
    }
  }

  /**
   * The answer a held lease gives at once (spending a unit of it, or refusing once the window's
   * quota is reserved everywhere); undefined when only Redis can answer (then `hit`). Lets the
   * pipeline skip a promise per request on the common path (ADR 0270).
   */
  spend(bucket: Bucket): RateLimitState | undefined {
    const { windowMs } = this.limits[bucket.cls];
    this.sweep();
    return this.spendLease(this.keyOf(bucket, windowMs), this.limitOf(bucket), windowMs);
  }

  private keyOf(bucket: Bucket, windowMs: number): string {
    return `${this.namespace}:rl:{${bucket.cls}:${windowMs}:${bucket.subject}}`;
  }

  private spendLease(key: string, limit: number, windowMs: number): RateLimitState | undefined {
    const lease = this.leases.get(key);
    if (!lease || this.now() >= lease.expiresAt) return undefined;
    if (lease.left > 0) {
      lease.left--;
      return this.state(lease, limit, windowMs, true);
    }
    // The window's quota is reserved everywhere: refused without a Redis call until it ends.
    if (lease.reserved >= limit) return this.state(lease, limit, windowMs, false);
    return undefined;
  }

  /** One renewal per bucket at a time: concurrent requests wait for it and share its units. */
  private renew(key: string, windowMs: number, limit: number): Promise<void> {
    let pending = this.renewing.get(key);
    if (!pending) {
      pending = this.redis.meldRateLimitLease(key, windowMs, leaseSize(limit), limit).then(
        ([reserved, resetMs, granted, leftMs]) => {
          this.renewing.delete(key);
          // Re-inserted, so the table's first entry is the bucket renewed longest ago: the one dropped
          // when full (its unspent units only make it refuse early; nothing is ever admitted twice).
          this.leases.delete(key);
          if (this.leases.size >= this.maxLeases) this.leases.delete(this.leases.keys().next().value!);
          this.leases.set(key, { left: granted, reserved, resetMs, expiresAt: this.now() + leftMs });
        },
        (err: unknown) => {
          this.renewing.delete(key);
          throw new RateLimitUnavailable(`rate limiting unavailable: ${errorSummary(err)}`, { cause: err });
        },
      );
      this.renewing.set(key, pending);
    }
    return pending;
  }

  /** Drops lapsed leases once a second, so buckets seen once do not accumulate. */
  private sweep(): void {
    const now = this.now();
    if (now - this.lastSweep < 1000) return;
    this.lastSweep = now;
    for (const [key, lease] of this.leases) if (now >= lease.expiresAt) this.leases.delete(key);
  }

  private state(lease: Lease, limit: number, windowMs: number, allowed: boolean): RateLimitState {
    return { limit, remaining: Math.max(0, limit - lease.reserved + lease.left), reset: Math.ceil(lease.resetMs / 1000), window: windowMs / 1000, allowed };
  }
  /** What to tell the client when Redis is down: nothing left in a window ending on our own clock. */
  unavailableState(bucket: Pick<Bucket, 'cls' | 'plan'>, now = Date.now()): RateLimitState {
    const { windowMs } = this.limits[bucket.cls];
    return { limit: this.limitOf(bucket), remaining: 0, reset: Math.ceil((now - (now % windowMs) + windowMs) / 1000), window: windowMs / 1000, allowed: false };
  }
}

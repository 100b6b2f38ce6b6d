import type { RateLimitState } from './rate-limiter';
import type { LocalLimitClass, RateLimits } from './limits';

/**
 * Fixed-window counters in this process, keyed by client (IP): what the gateway checks
 * before it spends a Postgres lookup or a Redis call on a request (ADR 0123). Per replica,
 * so N replicas let N times the limit through; that is enough for a flood guard, and it
 * keeps working while Redis is away. Keys live in a Map (the key is client input) and the
 * whole table is dropped when a window ends, so its size is bounded by one window's clients
 * (and `maxKeys`, past which new clients are counted together).
 */
export class LocalWindow {
  private counts = new Map<string, number>();
  private windowStart = 0;

  constructor(
    private readonly windowMs: number,
    private readonly limit: number,
    private readonly maxKeys = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one hit for `key`. */
  hit(key: string): RateLimitState {
    this.roll();
    const k = this.counts.has(key) || this.counts.size < this.maxKeys ? key : '(overflow)';
    const n = (this.counts.get(k) ?? 0) + 1;
    this.counts.set(k, n);
    return this.state(n);
  }

  /** The state of `key` without counting. */
  peek(key: string): RateLimitState {
    this.roll();
    return this.state(this.counts.get(key) ?? 0);
  }

  /** True once `key` has used up the window (the next hit would be refused). */
  exhausted(key: string): boolean {
    return this.peek(key).remaining === 0;
  }

  private roll(): void {
    const now = this.now();
    const start = now - (now % this.windowMs);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.counts = new Map();
    }
  }

  private state(n: number): RateLimitState {
    return {
      limit: this.limit,
      remaining: Math.max(0, this.limit - n),
      reset: Math.ceil((this.windowStart + this.windowMs) / 1000),
      window: this.windowMs / 1000,
      allowed: n <= this.limit,
    };
  }
}

/** Seconds until a refused state's window ends (at least 1), for `Retry-After`. */
export function retryAfterSeconds(state: RateLimitState, now = Date.now()): number {
  return Math.max(1, state.reset - Math.floor(now / 1000));
}

/** The in-process counter of a per-client class, sized from the resolved limits. */
export function localWindow(limits: RateLimits, cls: LocalLimitClass): LocalWindow {
  return new LocalWindow(limits[cls].windowMs, limits[cls].perPlan.s);
}

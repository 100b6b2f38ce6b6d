import { createHash } from 'node:crypto';
import { REDIS } from '@meld/platform';
import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { ProbeClock } from './probe-clock';

/** One recomputation per five minutes per project and surface (probe rule 2). */
export const REFRESH_INTERVAL_MS = 5 * 60_000;
/** A cached profile older than this is recomputed instead of served (ADR 0165). */
export const MAX_CACHED_AGE_MS = 60 * 60_000;
const LOCK_MS = 60_000;
const WAIT_STEP_MS = 100;

/**
 * Takes a surface's refresh throttle in one step (ADR 0165): when it is free or its time
 * (ProbeClock, ARGV[1]) is REFRESH_INTERVAL_MS old, it becomes this call's and {1, 0} comes back;
 * otherwise {0, time of the last refresh}. A GET then a SET let two concurrent refreshes through.
 * SET NX PX alone would measure the interval on Redis's clock, not on ProbeClock's.
 */
const TAKE_THROTTLE = `
local last = tonumber(redis.call('GET', KEYS[1]))
if last and tonumber(ARGV[1]) - last < tonumber(ARGV[2]) then return {0, last} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return {1, 0}
`;
/** Gives the throttle back if it still holds this call's time (a failed recomputation does not spend the refresh). */
const RELEASE_THROTTLE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export interface CacheAnswer<T> {
  value: T;
  cached: boolean;
  /** Seconds since the value was computed. */
  computedAgo: number;
  refreshDeclined?: boolean;
  /** Seconds until a refresh is accepted. */
  nextRefreshIn?: number;
}

interface Stored<T> {
  value: T;
  at: number;
}

/**
 * The Redis cache of unfiltered probe answers (probe rules 2 and 3, ADR 0165): keyed by project,
 * surface and a hash of the arguments; `refresh` recomputes at most once per five minutes per
 * project and surface (the throttle taken atomically, given back when the recomputation fails),
 * otherwise the cached answer comes back with `refreshDeclined`; two concurrent cold calls
 * compute once (a Redis lock; the other waits for the value).
 */
@Injectable()
export class ProbeCache {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly clock: ProbeClock,
  ) {}

  async get<T>(surface: string, projectId: string, args: unknown, refresh: boolean, compute: () => Promise<T>): Promise<CacheAnswer<T>> {
    const key = `meld:probes:${surface}:${projectId}:${createHash('sha256').update(JSON.stringify(args)).digest('base64url')}`;
    const throttleKey = `meld:probes:refresh:${surface}:${projectId}`;
    const now = this.clock.now();
    const stored = await this.read<T>(key);
    const fresh = stored && now - stored.at < MAX_CACHED_AGE_MS ? stored : undefined;
    if (fresh && !refresh) return this.answer(fresh, true);
    // Only a recomputation of a cached answer spends the refresh; a cold call computes anyway. An
    // expired answer still in Redis is what a waiter must not take for the holder's new one.
    if (!fresh) return this.answer(await this.computeOnce(key, stored?.at, compute), false);
    const [taken, last] = (await this.redis.eval(TAKE_THROTTLE, 1, throttleKey, String(now), REFRESH_INTERVAL_MS, REFRESH_INTERVAL_MS * 2)) as [number, number];
    if (!taken) {
      const nextRefreshIn = Math.min(REFRESH_INTERVAL_MS / 1000, Math.ceil((REFRESH_INTERVAL_MS - (now - last)) / 1000));
      return { ...this.answer(fresh, true), refreshDeclined: true, nextRefreshIn };
    }
    try {
      return this.answer(await this.computeOnce(key, fresh.at, compute), false);
    } catch (err) {
      // Nothing was recomputed: the next refresh is accepted. The failure answers, not a failed release.
      await this.redis.eval(RELEASE_THROTTLE, 1, throttleKey, String(now)).catch(() => undefined);
      throw err;
    }
  }

  /**
   * A probe's `metadata`: computed live when the call has a `root` (probe rule 3), else through the
   * cache, keyed by the arguments without `refresh` plus `keyExtras` (what else changes the answer:
   * the caller's PII access, its plan), with the cache and refresh fields.
   */
  async metadata<T extends object>(surface: string, projectId: string, input: { root?: unknown; refresh?: boolean }, keyExtras: object, compute: () => Promise<T>) {
    if (input.root !== undefined) return { metadata: { ...(await compute()), cached: false, computedAgo: 0 } };
    const { refresh = false, ...args } = input;
    const answer = await this.get(surface, projectId, { ...args, ...keyExtras }, refresh, compute);
    const refreshFields = answer.refreshDeclined ? { refreshDeclined: true, nextRefreshIn: answer.nextRefreshIn } : {};
    return { metadata: { ...answer.value, cached: answer.cached, computedAgo: answer.computedAgo, ...refreshFields } };
  }

  private answer<T>(stored: Stored<T>, cached: boolean): CacheAnswer<T> {
    return { value: stored.value, cached, computedAgo: cached ? Math.max(0, Math.floor((this.clock.now() - stored.at) / 1000)) : 0 };
  }

  private async read<T>(key: string): Promise<Stored<T> | undefined> {
    const text = await this.redis.get(key);
    return text ? (JSON.parse(text) as Stored<T>) : undefined;
  }

  /** Computes under a lock; a caller that finds the lock taken waits for the holder's value (newer than `staleAt`). */
  private async computeOnce<T>(key: string, staleAt: number | undefined, compute: () => Promise<T>): Promise<Stored<T>> {
    const lock = `${key}:lock`;
    for (let waited = 0; waited < LOCK_MS; waited += WAIT_STEP_MS) {
      if (await this.redis.set(lock, '1', 'PX', LOCK_MS, 'NX')) {
        try {
          // The time the computation starts, as its answer's computedAt: computedAgo counts from it.
          const at = this.clock.now();
          const stored = { value: await compute(), at };
          await this.redis.set(key, JSON.stringify(stored), 'PX', MAX_CACHED_AGE_MS * 2);
          return stored;
        } finally {
          await this.redis.del(lock);
        }
      }
      await new Promise((r) => setTimeout(r, WAIT_STEP_MS));
      const done = await this.read<T>(key);
      if (done && done.at !== staleAt) return done;
    }
    const at = this.clock.now();
    return { value: await compute(), at };
  }
}

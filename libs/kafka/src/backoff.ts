/**
 * Retry delays: exponential with full jitter (AWS architecture blog, "Exponential Backoff
 * And Jitter"). Full jitter spreads the retries of many keys that failed together (a store
 * restart) instead of having them hit the store again in lockstep.
 */
export interface BackoffOptions {
  /** Attempts in total, the first one included; after the last failure the message is dead-lettered. */
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { maxAttempts: 5, initialDelayMs: 100, maxDelayMs: 5000 };

/** Delay before attempt `failedAttempts + 1`; `random` is injectable for tests. */
export function backoffDelay(failedAttempts: number, options: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** Math.max(0, failedAttempts - 1));
  return Math.floor(random() * ceiling);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Delay before probe `probes + 1` of a store that is down (ADR 0111): capped exponential with
 * equal jitter, never under half the ceiling, so a long outage is probed at a steady pace.
 */
export function pauseDelay(probes: number, options: Pick<BackoffOptions, 'initialDelayMs' | 'maxDelayMs'>, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** Math.min(30, Math.max(0, probes - 1)));
  return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
}

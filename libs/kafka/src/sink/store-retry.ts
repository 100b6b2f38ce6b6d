import { safeErrorMessage } from '@meld/contracts';
import { backoffDelay, pauseDelay, sleep, type BackoffOptions } from '../backoff';
import type { Logger } from '../logger';
import { asError } from '../outcome';
import { isTransientStoreError } from '../store-errors';
import type { TopicSeries } from '../topic-series';
import { Abandoned } from './segment';

type Series = ReturnType<TopicSeries['of']>;

/**
 * Retries a sink's store action with backoff. A transient store error pauses the writer without
 * bound (ADR 0111): fetching stops at maxPendingRows meanwhile. Anything else counts against
 * `attempts`. stop() giving up (`abandoned()`) ends the retries with Abandoned.
 */
export class StoreRetry {
  private paused: { since: number; probes: number } | undefined;

  constructor(
    private readonly ctx: { group: string; topic: string; logger: Logger; series: Series; backoff: BackoffOptions },
    private readonly abandoned: () => boolean,
  ) {}

  /** Runs `action` until it succeeds (undefined) or `attempts` failures run out (the last error). */
  async run(what: string, count: number, attempts: number, action: () => Promise<void>): Promise<Error | undefined> {
    let failures = 0;
    try {
      for (;;) {
        try {
          await action();
          return undefined;
        } catch (err) {
          const error = asError(err);
          this.ctx.series.failed.inc(count);
          if (this.abandoned()) throw new Abandoned(error.message);
          if (!isTransientStoreError(error)) {
            this.resume();
            if (++failures >= attempts) return error;
          }
          await sleep(this.delayAfter(error, what, count, failures));
          if (this.abandoned()) throw new Abandoned(error.message);
        }
      }
    } finally {
      this.resume();
    }
  }

  private delayAfter(error: Error, what: string, count: number, failures: number): number {
    const { group, topic, logger, backoff } = this.ctx;
    if (!isTransientStoreError(error)) {
      const delay = backoffDelay(failures, backoff);
      logger.warn({ group, topic, rows: count, attempt: failures, delay, err: safeErrorMessage(error) }, `${what} failed, retrying`);
      return delay;
    }
    if (!this.paused) {
      this.paused = { since: Date.now(), probes: 0 };
      this.ctx.series.storePaused(true);
      logger.warn({ group, topic, rows: count, err: safeErrorMessage(error) }, `store unavailable: ${what} paused, retrying until it answers`);
    }
    return pauseDelay(++this.paused.probes, backoff);
  }

  private resume(): void {
    if (!this.paused) return;
    const { group, topic, logger, series } = this.ctx;
    series.storePaused(false);
    logger.warn({ group, topic, pausedMs: Date.now() - this.paused.since, probes: this.paused.probes }, 'store answered: sink resumed');
    this.paused = undefined;
  }
}

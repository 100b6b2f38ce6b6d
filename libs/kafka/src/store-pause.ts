import { pauseDelay } from './backoff';

/**
 * One partition batch's pause while its store is down (ADR 0111). The first message that fails
 * with a transient store error becomes the probe: it retries alone with capped exponential
 * backoff, for as long as it takes, while the batch dispatches nothing new and every other
 * message that failed the same way waits for the probe. When the probe gets any answer from
 * the store (success, or an error of its own), the pause ends and the waiters retry at once.
 * Without it, every key in flight (up to 500 in identity-merge) would hammer a store that is
 * down, each on its own timer.
 */
export interface StorePauseOptions {
  initialDelayMs: number;
  maxDelayMs: number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  /** Once when the pause starts, with the error that started it. */
  onPause: (error: Error) => void;
  /** Once when it ends, with how long it lasted and how many probes failed. */
  onResume: (pausedMs: number, probes: number) => void;
}

export class StorePause {
  private probe: object | undefined;
  private probes = 0;
  private since = 0;
  private ended: Promise<void> | undefined;
  private end: (() => void) | undefined;

  constructor(private readonly options: StorePauseOptions) {}

  /** While a pause lasts: resolves when it ends (the batch waits before dispatching more). */
  get paused(): Promise<void> | undefined {
    return this.ended;
  }

  /**
   * After `token`'s message failed with a transient store error: resolves when it should try
   * again (the probe after its backoff, any other message when the pause ends).
   */
  async beforeRetry(token: object, error: Error): Promise<void> {
    if (this.probe === undefined) {
      this.probe = token;
      this.probes = 0;
      this.since = Date.now();
      this.ended = new Promise((resolve) => (this.end = resolve));
      this.options.onPause(error);
    }
    if (this.probe !== token) return this.ended;
    this.probes++;
    await this.options.sleep(pauseDelay(this.probes, this.options, this.options.random));
  }

  /** `token`'s message got an answer from the store (or gave up): a pause it probed ends. */
  answered(token: object): void {
    if (this.probe !== token) return;
    this.probe = undefined;
    const end = this.end;
    this.ended = undefined;
    this.end = undefined;
    this.options.onResume(Date.now() - this.since, this.probes);
    end?.();
  }
}

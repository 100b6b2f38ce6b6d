import { sleep } from '../backoff';

/** Wakes whoever waits for the sink to move on (a write stored, a batch taken). */
export class Progress {
  private waiters: Array<() => void> = [];

  /** Resolves at the next wake(), or after `ms`. */
  wait(ms: number): Promise<void> {
    return Promise.race([new Promise<void>((resolve) => this.waiters.push(resolve)), sleep(Math.max(0, ms))]);
  }

  wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

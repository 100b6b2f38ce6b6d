import { Injectable } from '@nestjs/common';

/** The time the probe cache and throttle read; tests move it (`set`) instead of waiting five minutes. */
@Injectable()
export class ProbeClock {
  private offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  /** Moves the clock forward (tests). */
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

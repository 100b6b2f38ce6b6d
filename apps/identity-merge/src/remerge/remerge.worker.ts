import { errorSummary } from '@meld/contracts';
import { Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import type { RemergeRepository } from './remerge.repository';
import type { RemergeProject } from './usecases/remerge-project/remerge-project.usecase';

/** `MELD_REMERGE_POLL_MS` (default 2000): how often an idle worker looks for a request. */
export function remergePollMs(env: NodeJS.ProcessEnv = process.env): number {
  const ms = Number(env.MELD_REMERGE_POLL_MS);
  return Number.isInteger(ms) && ms > 0 ? ms : 2000;
}

/**
 * Claims re-merge requests (ADR 0331) one at a time and works each through; looks again every
 * poll interval while idle. A failed run (a store outage) is logged and its lease left to expire,
 * so this or another replica takes it over from its saved cursor.
 */
export class RemergeWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('RemergeWorker');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopping = false;

  constructor(
    private readonly repository: RemergeRepository,
    private readonly remerge: RemergeProject,
    private readonly pollMs: number,
  ) {}

  /** Claims and works through every waiting request; resolves when none is left. */
  async runOnce(): Promise<number> {
    let handled = 0;
    for (let claim = await this.repository.claim(); claim && !this.stopping; claim = await this.repository.claim()) {
      await this.remerge.execute(claim, () => this.stopping);
      handled++;
    }
    return handled;
  }

  onApplicationBootstrap(): void {
    this.schedule(0);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .then(() => undefined)
        .catch((err: unknown) => this.logger.warn(`re-merge paused, retried at the next poll: ${errorSummary(err)}`))
        .finally(() => this.schedule(this.pollMs));
    }, ms);
    this.timer.unref();
  }
}

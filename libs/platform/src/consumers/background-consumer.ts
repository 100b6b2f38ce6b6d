import { errorSummary } from '@meld/contracts';
import type { ConsumerRunner } from '@meld/kafka';
import type { Logger } from '@nestjs/common';

const START_RETRY_MS = 2000;

export interface BackgroundConsumerOptions {
  /** Names the consumer in logs (e.g. its group). */
  name: string;
  logger: Logger;
  /** A fresh libs/kafka runner: a runner starts once, so each attempt gets a new one. */
  create: () => ConsumerRunner;
  /** Pause between attempts (default 2 s). */
  retryMs?: number;
}

/**
 * A libs/kafka consumer runner started in the background: Kafka may not answer when the app
 * boots, so a failed start is retried with a fresh runner until it joins its group or the
 * app stops; readiness reports meanwhile (ADR 0217).
 */
export class BackgroundConsumer {
  private runner?: ConsumerRunner;
  private joined = false;
  private stopped = false;
  private starting?: Promise<void>;

  constructor(private readonly options: BackgroundConsumerOptions) {}

  start(): void {
    this.starting ??= this.startLoop();
  }

  private async startLoop(): Promise<void> {
    while (!this.stopped) {
      const runner = this.options.create();
      this.runner = runner;
      try {
        await runner.start();
        this.joined = true;
        return;
      } catch (err) {
        await runner.stop().catch(() => undefined);
        this.options.logger.warn(`${this.options.name} consumer could not start, retrying: ${errorSummary(err)}`);
        await new Promise((r) => setTimeout(r, this.options.retryMs ?? START_RETRY_MS));
      }
    }
  }

  /** Resolves once the group is joined (or the consumer was stopped before). */
  started(): Promise<void> {
    return this.starting ?? Promise.resolve();
  }

  /** False until started, and once the consumer crashed for good. */
  isHealthy(): boolean {
    return this.joined && (this.runner?.isHealthy() ?? false);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.starting;
    await this.runner?.stop();
  }
}

import type { ConsumerRunner } from '@meld/kafka';
import { Logger } from '@nestjs/common';
import { BackgroundConsumer } from './background-consumer';

/** A runner whose start fails `failures` times across instances, then succeeds. */
function runners(failures: number) {
  const made: Array<{ started: boolean; stopped: boolean }> = [];
  const create = (): ConsumerRunner => {
    const state = { started: false, stopped: false };
    made.push(state);
    const attempt = made.length;
    return {
      start: async () => {
        if (attempt <= failures) throw new Error('broker not reachable');
        state.started = true;
      },
      stop: async () => {
        state.stopped = true;
      },
      isHealthy: () => !state.stopped,
      get consumer(): never {
        throw new Error('not used');
      },
    };
  };
  return { made, create };
}

const logger = new Logger('spec');
beforeAll(() => Logger.overrideLogger(false));

describe('BackgroundConsumer', () => {
  it('retries a failed start with a fresh runner until it joins, and is unhealthy until then', async () => {
    const { made, create } = runners(2);
    const consumer = new BackgroundConsumer({ name: 'g', logger, create, retryMs: 5 });
    expect(consumer.isHealthy()).toBe(false);
    consumer.start();
    consumer.start(); // idempotent
    await consumer.started();
    expect(made).toHaveLength(3);
    expect(made.slice(0, 2).every((r) => r.stopped)).toBe(true);
    expect(consumer.isHealthy()).toBe(true);
    await consumer.stop();
    expect(made[2].stopped).toBe(true);
    expect(consumer.isHealthy()).toBe(false);
  });

  it('stops retrying when stopped while the broker is away', async () => {
    const { made, create } = runners(Number.POSITIVE_INFINITY);
    const consumer = new BackgroundConsumer({ name: 'g', logger, create, retryMs: 5 });
    consumer.start();
    await new Promise((r) => setTimeout(r, 30));
    await consumer.stop();
    const attempts = made.length;
    await new Promise((r) => setTimeout(r, 30));
    expect(made.length).toBe(attempts);
    expect(consumer.isHealthy()).toBe(false);
  });
});

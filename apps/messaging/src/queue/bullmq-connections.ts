import { createRedisClient, loadStoreConfig } from '@meld/platform';
import type Redis from 'ioredis';

/**
 * The Redis connections of a BullMQ queue and its worker (ADR 0122 roles), which BullMQ leaves
 * open when it is given them: `closeAll` ends them after the queue and worker are closed.
 */
export class BullmqConnections {
  private readonly config = loadStoreConfig(['redis']);
  private readonly open: Redis[] = [];

  /**
   * The queue's: adds and checks made on a request path, so each command fails after
   * MELD_REDIS_TIMEOUT_MS when Redis stalls and at once while it is away (ADR 0284).
   */
  producer(name: string): Redis {
    return this.track(createRedisClient(this.config.redisUrl!, { name, role: 'request', timeoutMs: this.config.redisTimeoutMs! }));
  }

  /** A worker's: BullMQ blocks on it and retries its commands itself, so none may time out. */
  worker(name: string): Redis {
    return this.track(createRedisClient(this.config.redisUrl!, { name, role: 'queue', timeoutMs: this.config.redisTimeoutMs! }));
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.open.map((c) => c.quit().catch(() => c.disconnect())));
  }

  private track(redis: Redis): Redis {
    this.open.push(redis);
    return redis;
  }
}

import { loadStoreConfig } from '@meld/platform';
import Redis from 'ioredis';

/**
 * The Redis connections of a BullMQ queue and its worker. BullMQ blocks on Redis commands,
 * which must never time out (maxRetriesPerRequest null), and leaves connections it was given
 * open: `closeAll` ends them after the queue and worker are closed.
 */
export class BullmqConnections {
  private readonly url = loadStoreConfig(['redis']).redisUrl!;
  private readonly open: Redis[] = [];

  connection(): Redis {
    const redis = new Redis(this.url, { maxRetriesPerRequest: null, retryStrategy: (n) => Math.min(n * 200, 2000) });
    this.open.push(redis);
    return redis;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.open.map((c) => c.quit().catch(() => c.disconnect())));
  }
}

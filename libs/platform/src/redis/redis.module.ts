import { type DynamicModule, Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';

export const REDIS = Symbol('REDIS');

@Injectable()
class RedisLifecycle implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}
  async onApplicationShutdown() {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/** One shared ioredis client; it reconnects by itself, so a Redis restart heals without a pod restart. */
@Module({})
export class RedisModule {
  static forRoot(url: string): DynamicModule {
    return {
      module: RedisModule,
      global: true,
      providers: [
        {
          provide: REDIS,
          useFactory: () => {
            const redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: false, retryStrategy: (n) => Math.min(n * 200, 2000) });
            // Log each distinct connection error once, not on every reconnect attempt.
            const log = new Logger('redis');
            let last = '';
            redis.on('error', (err: Error) => {
              if (err.message !== last) log.warn(`connection error: ${(last = err.message)}`);
            });
            redis.on('ready', () => {
              if (last) log.log('reconnected');
              last = '';
            });
            return redis;
          },
        },
        RedisLifecycle,
      ],
      exports: [REDIS],
    };
  }
}

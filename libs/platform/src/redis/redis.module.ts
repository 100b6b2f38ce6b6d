import { errorSummary } from '@meld/contracts';
import { type DynamicModule, Inject, Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { createRedisClient } from './redis-client';

export const REDIS = Symbol('REDIS');

@Injectable()
class RedisLifecycle implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}
  async onApplicationShutdown() {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * One shared ioredis client for request paths (ADR 0122: fails fast, never waits past its
 * timeout); it reconnects by itself, so a Redis restart heals without a pod restart.
 */
@Module({})
export class RedisModule {
  static forRoot(url: string, timeoutMs: number): DynamicModule {
    return {
      module: RedisModule,
      global: true,
      providers: [
        {
          provide: REDIS,
          useFactory: () => {
            const redis = createRedisClient(url, { name: 'meld-platform', role: 'request', timeoutMs });
            // Log each distinct connection error once, not on every reconnect attempt.
            const log = new Logger('redis');
            let last = '';
            redis.on('error', (err: Error) => {
              // By class and code (ECONNREFUSED): a reply error's text can quote a key or a value (ADR 0338).
              const summary = errorSummary(err);
              if (summary !== last) log.warn(`connection error: ${(last = summary)}`);
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

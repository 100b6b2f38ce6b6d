import { errorSummary } from '@meld/contracts';
import { REDIS } from '@meld/platform';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type Redis from 'ioredis';

/**
 * Publishes on the channels the gateways listen to (`@meld/auth` channels.ts) so their
 * token and tenancy caches drop what the admin API just changed.
 */
@Injectable()
export class TenancyEvents {
  private readonly log = new Logger('admin');

  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  /** False when Redis is unreachable; the caller decides whether that fails the request. */
  async publish(channel: string, message: string): Promise<boolean> {
    try {
      await this.redis.publish(channel, message);
      return true;
    } catch (err) {
      this.log.warn(`could not publish on ${channel}: ${errorSummary(err)}`);
      return false;
    }
  }
}

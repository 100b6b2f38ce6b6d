import { errorSummary } from '@meld/contracts';
import { TENANCY_CHANGED_CHANNEL, TOKEN_REVOKED_CHANNEL } from '@meld/auth';
import { Logger } from '@nestjs/common';
import { createRedisClient } from '@meld/platform';
import type Redis from 'ioredis';
import type { TenancyStore } from './tenancy-store';
import type { TokenStore } from './token-store';

/**
 * Listens on the invalidation channels (a subscriber needs its own connection). After a
 * reconnect every cache is dropped: messages published while we were away are lost.
 */
export class CacheInvalidation {
  private readonly log = new Logger('gateway-cache');
  private readonly sub: Redis;
  private connectedBefore = false;

  constructor(redisUrl: string, timeoutMs: number, tokens: TokenStore, tenancy: TenancyStore) {
    // A subscriber (ADR 0122): SUBSCRIBE is sent once the connection is up and never times out.
    this.sub = createRedisClient(redisUrl, { name: 'meld-gateway-invalidation', role: 'subscriber', timeoutMs });
    this.sub.on('error', () => undefined); // the request-path client logs Redis outages already
    this.sub.on('ready', () => {
      if (this.connectedBefore) {
        tokens.clear();
        tenancy.clear();
        this.log.log('resubscribed; caches dropped');
      }
      this.connectedBefore = true;
    });
    this.sub.on('message', (channel: string, message: string) => {
      if (channel === TOKEN_REVOKED_CHANNEL) tokens.evictToken(tokenIdOf(message));
      else if (channel === TENANCY_CHANGED_CHANNEL) {
        tenancy.clear();
        tokens.clear();
      }
    });
    void this.sub.subscribe(TOKEN_REVOKED_CHANNEL, TENANCY_CHANGED_CHANNEL).catch((err: unknown) => this.log.warn(`subscribe failed: ${errorSummary(err)}`));
  }

  async close(): Promise<void> {
    await this.sub.quit().catch(() => this.sub.disconnect());
  }
}

/** The agreed payload is the bare token id; a JSON object with `id` or `tokenId` is accepted too. */
export function tokenIdOf(message: string): string {
  const text = message.trim();
  if (!text.startsWith('{')) return text;
  try {
    const parsed = JSON.parse(text) as { id?: unknown; tokenId?: unknown };
    return String(parsed.tokenId ?? parsed.id ?? '');
  } catch {
    return text;
  }
}

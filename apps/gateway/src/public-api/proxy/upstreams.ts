import type { AppName } from '@meld/contracts';
import { Pool } from 'undici';

/**
 * One keep-alive undici pool per internal app. The internal apps keep idle sockets 65 s
 * (bootstrapApp), longer than the pool does, so the pool never reuses a socket the server
 * is closing.
 */
export class Upstreams {
  private readonly pools = new Map<AppName, Pool>();

  constructor(private readonly urls: Record<AppName, string>) {}

  pool(app: AppName): Pool {
    let pool = this.pools.get(app);
    if (!pool) {
      pool = new Pool(this.urls[app], {
        connections: 128,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 60_000,
        connectTimeout: 2_000,
        headersTimeout: 30_000,
        bodyTimeout: 60_000,
      });
      this.pools.set(app, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => p.destroy())));
  }
}

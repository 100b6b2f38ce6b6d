import { DATA_SOURCE } from '@meld/db';
import { Inject, Injectable, Logger, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { createRedisClient } from '@meld/platform';
import type Redis from 'ioredis';
import type { DataSource } from 'typeorm';
import { loadAppUrls } from '../upstreams/app-urls';
import { CacheInvalidation } from './access/cache-invalidation';
import { TenancyStore } from './access/tenancy-store';
import { TokenStore } from './access/token-store';
import { loadGatewayConfig } from './gateway-config';
import type { AnonymousDoor } from './doors/anonymous-door';
import { linkDoor, linkDoorPlugin } from './doors/link-door';
import { oauthDoor, oauthDoorPlugin } from './oauth/oauth-door';
import { PublicApi } from './pipeline/public-api';
import { answerUnreadablePaths, publicApiPlugin } from './pipeline/public-api.plugin';
import { Upstreams } from './proxy/upstreams';
import { localWindow } from './rate-limit/local-window';
import { RateLimiter } from './rate-limit/rate-limiter';

/**
 * Wires the public pipeline and mounts it on the gateway's Fastify instance. The
 * rate-limit Redis client is its own, auto-pipelined (concurrent requests share round
 * trips); as every request-path client (ADR 0122) it has no offline queue, no retries and
 * a command timeout, so a Redis outage or stall turns into a 503 within the budget
 * instead of requests piling up.
 */
@Injectable()
class PublicApiRuntime implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger('gateway');
  private readonly redis: Redis;
  private readonly invalidation: CacheInvalidation;
  private readonly upstreams: Upstreams;
  private readonly api: PublicApi;
  private readonly oauthDoor: AnonymousDoor;
  private readonly linkDoor: AnonymousDoor;

  constructor(
    @Inject(DATA_SOURCE) db: DataSource,
    private readonly host: HttpAdapterHost,
  ) {
    const config = loadGatewayConfig();
    this.redis = createRedisClient(config.redisUrl, { name: 'meld-gateway-ratelimit', role: 'request', timeoutMs: config.redisTimeoutMs, extra: { enableAutoPipelining: true } });
    this.redis.on('error', () => undefined); // refusals are logged per request; the platform client logs the outage
    const tokens = new TokenStore(db, config.cacheTtlMs, config.negativeCacheTtlMs, `${config.publicUrl}/v1`, undefined, config.planGates);
    const tenancy = new TenancyStore(db, config.cacheTtlMs);
    this.invalidation = new CacheInvalidation(config.redisUrl, config.redisTimeoutMs, tokens, tenancy);
    this.upstreams = new Upstreams(loadAppUrls());
    const limiter = new RateLimiter(this.redis, config.rateLimits, config.rateLimitNamespace);
    this.api = new PublicApi({
      tokens,
      tenancy,
      limiter,
      clients: localWindow(config.rateLimits, 'client'),
      authFailures: localWindow(config.rateLimits, 'authFailures'),
      upstreams: this.upstreams,
      db,
      principalKeys: config.principalKeys,
      publicUrl: config.publicUrl,
    });
    this.oauthDoor = oauthDoor({ limiter, upstreams: this.upstreams });
    this.linkDoor = linkDoor({ limiter, upstreams: this.upstreams });
  }

  onModuleInit() {
    const fastify = this.host.httpAdapter.getInstance<FastifyInstance>();
    void fastify.register(publicApiPlugin(this.api));
    answerUnreadablePaths(fastify, this.api);
    void fastify.register(oauthDoorPlugin(this.oauthDoor));
    void fastify.register(linkDoorPlugin(this.linkDoor));
    this.log.log('public API, OAuth and SMS link routes mounted');
  }

  async onApplicationShutdown() {
    await Promise.all([this.upstreams.close(), this.invalidation.close(), this.redis.quit().catch(() => this.redis.disconnect())]);
  }
}

@Module({ providers: [PublicApiRuntime] })
export class PublicApiModule {}

import { type ClickHouse, createClickHouse } from '@meld/clickhouse';
import { DATA_SOURCE, DbModule } from '@meld/db';
import { type DynamicModule, type FactoryProvider, Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { clickhouseCheck, kafkaCheck, postgresCheck, redisCheck } from '../health/store-checks';
import type { ReadinessCheck } from '../health/readiness-check';
import { REDIS, RedisModule } from '../redis/redis.module';
import { KafkaClient } from './kafka-client';
import type { StoreConfig, StoreName } from './store-env';

export const CLICKHOUSE = Symbol('CLICKHOUSE');
export const KAFKA = Symbol('KAFKA');

@Injectable()
class StoreShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(CLICKHOUSE) private readonly ch: ClickHouse | null,
    @Inject(KAFKA) private readonly kafka: KafkaClient | null,
  ) {}
  async onApplicationShutdown() {
    await Promise.all([this.ch?.close(), this.kafka?.close()]);
  }
}

/** Clients for the stores an app declares, and the readiness checks that name them. */
@Global()
@Module({})
export class StoresModule {
  static forRoot(app: string, stores: StoreName[], config: StoreConfig): DynamicModule {
    const has = (s: StoreName) => stores.includes(s);
    return {
      module: StoresModule,
      imports: [
        ...(has('postgres') ? [DbModule.forRoot({ url: config.postgresUrl!, applicationName: `meld-${app}` })] : []),
        ...(has('redis') ? [RedisModule.forRoot(config.redisUrl!, config.redisTimeoutMs!)] : []),
      ],
      providers: [
        {
          provide: CLICKHOUSE,
          useFactory: () =>
            has('clickhouse') ? createClickHouse({ url: config.clickhouseUrl!, database: config.clickhouseDb! }) : null,
        },
        { provide: KAFKA, useFactory: () => (has('kafka') ? new KafkaClient(config.kafkaBrokers!, `meld-${app}`) : null) },
        StoreShutdown,
      ],
      exports: [CLICKHOUSE, KAFKA],
    };
  }
}

/** Readiness checks for exactly the declared stores, in a stable order. */
export function storeChecks(stores: StoreName[]): Omit<FactoryProvider<ReadinessCheck[]>, 'provide'> {
  const tokens = { postgres: DATA_SOURCE, redis: REDIS, clickhouse: CLICKHOUSE, kafka: KAFKA } as const;
  const make = {
    postgres: (c: DataSource) => postgresCheck(c),
    redis: (c: Parameters<typeof redisCheck>[0]) => redisCheck(c),
    clickhouse: (c: ClickHouse) => clickhouseCheck(c),
    kafka: (c: KafkaClient) => kafkaCheck(c),
  } as const;
  return {
    inject: stores.map((s) => tokens[s]),
    useFactory: (...clients: unknown[]) => stores.map((s, i) => (make[s] as (c: unknown) => ReadinessCheck)(clients[i])),
  };
}

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
/** The client for reads a request makes: read-only, bounded in time and memory (ADR 0114). */
export const CLICKHOUSE_READER = Symbol('CLICKHOUSE_READER');
export const KAFKA = Symbol('KAFKA');

@Injectable()
class StoreShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(CLICKHOUSE) private readonly ch: ClickHouse | null,
    @Inject(CLICKHOUSE_READER) private readonly reader: ClickHouse | null,
    @Inject(KAFKA) private readonly kafka: KafkaClient | null,
  ) {}
  async onApplicationShutdown() {
    await Promise.all([this.ch?.close(), this.reader?.close(), this.kafka?.close()]);
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
        ...(has('postgres') ? [DbModule.forRoot({ url: config.postgresUrl!, applicationName: `meld-${app}`, poolSize: config.postgresPoolSize, requestTimeoutMs: config.postgresRequestTimeoutMs })] : []),
        ...(has('redis') ? [RedisModule.forRoot(config.redisUrl!, config.redisTimeoutMs!)] : []),
      ],
      providers: [
        {
          provide: CLICKHOUSE,
          useFactory: () =>
            has('clickhouse') ? createClickHouse({ url: config.clickhouseUrl!, database: config.clickhouseDb! }) : null,
        },
        { provide: CLICKHOUSE_READER, useFactory: () => (has('clickhouse') ? createReader(config) : null) },
        { provide: KAFKA, useFactory: () => (has('kafka') ? new KafkaClient(config.kafkaBrokers!, `meld-${app}`) : null) },
        StoreShutdown,
      ],
      exports: [CLICKHOUSE, CLICKHOUSE_READER, KAFKA],
    };
  }
}

/**
 * Every read runs with max_execution_time and max_memory_usage, and read-only: as the user of
 * MELD_CLICKHOUSE_READ_URL (whose profile must be readonly=2, which still lets a query set its
 * limits), else as the main user with readonly=2 per query. The client gives up a little after
 * max_execution_time, so a server that stops answering cannot hang the request either.
 */
function createReader(config: StoreConfig): ClickHouse {
  const seconds = config.clickhouseMaxExecutionTime ?? 10;
  return createClickHouse({
    url: config.clickhouseReadUrl ?? config.clickhouseUrl!,
    database: config.clickhouseDb!,
    application: 'meld-reader',
    requestTimeoutMs: seconds * 1000 + READER_TIMEOUT_MARGIN_MS,
    settings: {
      max_execution_time: seconds,
      max_memory_usage: String(config.clickhouseMaxMemoryUsage ?? 1_000_000_000),
      ...(config.clickhouseReadUrl ? {} : { readonly: '2' }),
    },
  });
}

/** ClickHouse checks the time between blocks: a query may run a little past its limit before it stops. */
const READER_TIMEOUT_MARGIN_MS = 2_000;

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

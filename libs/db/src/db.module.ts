import { errorSummary } from '@meld/contracts';
import { type DynamicModule, Inject, Injectable, Logger, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { createDataSource, type DataSourceOptions } from './data-source';

export const DATA_SOURCE = Symbol('DATA_SOURCE');

/**
 * Connects in the background with retries so the app starts (and answers liveness)
 * while Postgres is still coming up; readiness stays 503 until it is connected. Work that
 * starts with the app and needs Postgres waits for `connected` (ADR 0283): the app's
 * bootstrap hooks run before it.
 */
@Injectable()
export class PostgresConnection implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger('postgres');
  private stopped = false;
  private resolveConnected!: () => void;
  /** Resolves once the DataSource is initialized; never settles if the app stops first. */
  readonly connected = new Promise<void>((resolve) => (this.resolveConnected = resolve));
  constructor(@Inject(DATA_SOURCE) private readonly ds: DataSource) {}

  onModuleInit() {
    void this.connect().then(() => {
      if (this.ds.isInitialized) this.resolveConnected();
    });
  }

  private async connect() {
    for (let attempt = 1; !this.stopped && !this.ds.isInitialized; attempt++) {
      try {
        await this.ds.initialize();
        this.log.log('connected');
      } catch (err) {
        this.log.warn(`connect attempt ${attempt} failed: ${errorSummary(err)}`);
        await new Promise((r) => setTimeout(r, Math.min(attempt * 250, 2000)));
      }
    }
  }

  async onApplicationShutdown() {
    this.stopped = true;
    if (this.ds.isInitialized) await this.ds.destroy();
  }
}

@Module({})
export class DbModule {
  static forRoot(options: DataSourceOptions): DynamicModule {
    return {
      module: DbModule,
      global: true,
      providers: [{ provide: DATA_SOURCE, useFactory: () => createDataSource(options) }, PostgresConnection],
      exports: [DATA_SOURCE, PostgresConnection],
    };
  }
}

import { type DynamicModule, type FactoryProvider, Module, type ModuleMetadata } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { AliveController, HealthController } from './health/health.controller';
import { READINESS_CHECKS, type ReadinessCheck } from './health/readiness-check';
import { loggerModule } from './logging/logger.module';
import { MetricsController } from './metrics/metrics.controller';

export interface PlatformOptions {
  app: string;
  logLevel: string;
  /** Modules whose providers the readiness checks need (store clients). */
  imports?: ModuleMetadata['imports'];
  checks: Omit<FactoryProvider<ReadinessCheck[]>, 'provide'>;
  /**
   * The app serves its own health endpoints and no `/metrics` on its port: the gateway, whose
   * port is public (bare statuses there, details and metrics on its operations port, ADR 0105).
   * Every other app gets `/livez`, `/healthz` (liveness), `/readyz` (stores, named) and `/metrics`.
   */
  ownHealth?: boolean;
}

/** Logs, request ids, health, readiness and metrics: what every Meld app has from day one. */
@Module({})
export class PlatformModule {
  static forRoot(options: PlatformOptions): DynamicModule {
    return {
      module: PlatformModule,
      global: true,
      imports: [loggerModule(options.app, options.logLevel), TerminusModule.forRoot({ errorLogStyle: 'json' }), ...(options.imports ?? [])],
      controllers: options.ownHealth ? [] : [HealthController, MetricsController, AliveController],
      providers: [{ provide: READINESS_CHECKS, ...options.checks }],
      exports: [READINESS_CHECKS],
    };
  }
}

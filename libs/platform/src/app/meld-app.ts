import { safeErrorMessage } from '@meld/contracts';
import { PRINCIPAL_VERIFIER, PrincipalGuard } from '@meld/auth';
import { type DynamicModule, type FactoryProvider, Module, type ModuleMetadata } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { lowerCpuPriority } from '../cpu/cpu-priority';
import { HttpErrorFilter } from '../errors/http-error.filter';
import { APP_NAME, OpenApiController } from '../openapi/openapi.controller';
import { z } from 'zod';
import { bootstrapApp } from '../bootstrap/bootstrap-app';
import { maxHeaderBytesFor } from '../bootstrap/request-limits';
import { envVars, loadConfig } from '../config/load-config';
import { loadPrincipalAppKey } from '../config/secrets';
import type { ReadinessCheck } from '../health/readiness-check';
import { PlatformModule } from '../platform.module';
import { loadStoreConfig, type StoreName } from '../stores/store-env';
import { StoresModule, storeChecks } from '../stores/stores.module';

export interface MeldAppDefinition {
  name: string;
  /** Default port; `PORT` (or `portEnv`) overrides it. */
  port: number;
  portEnv?: string;
  stores: StoreName[];
  imports?: ModuleMetadata['imports'];
  controllers?: ModuleMetadata['controllers'];
  providers?: ModuleMetadata['providers'];
  /** See PlatformOptions.ownHealth. */
  ownHealth?: boolean;
  /**
   * Readiness checks beyond the stores': a peer the app needs, checked through the app's own
   * providers (messaging's SMSC session, ADR 0348). `imports` are the modules that provide `inject`.
   */
  checks?: AppChecks;
  /** The gateway faces the public; every other app refuses calls without the gateway's signed principal. */
  publicFacing?: boolean;
  bodyLimit?: number;
  /** See BootstrapOptions.decodeBodies: ingest takes gzip and deflate bodies (ADR 0012). */
  decodeBodies?: boolean;
  /**
   * Nice value for batch apps sharing a machine with the request path (cpu/cpu-priority.ts);
   * `MELD_CPU_NICE` overrides it (0 turns it off).
   */
  cpuNice?: number;
}

export interface AppChecks {
  imports: NonNullable<ModuleMetadata['imports']>;
  inject: NonNullable<FactoryProvider['inject']>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  useFactory(...deps: any[]): ReadinessCheck[];
}

@Module({})
class MeldAppModule {}

@Module({})
class PrincipalVerifierModule {}

/**
 * The app's principal key, global: the guard checks principals with it, and a feature may derive a
 * key of its own from it (HKDF with its own label), as the audience's event scroll ids do (ADR 0354).
 */
function principalVerifierModule(app: string, env: NodeJS.ProcessEnv): DynamicModule {
  return { module: PrincipalVerifierModule, global: true, providers: [{ provide: PRINCIPAL_VERIFIER, useValue: { app, key: loadPrincipalAppKey(app, env) } }], exports: [PRINCIPAL_VERIFIER] };
}

/** The stores' checks, then the app's own. */
function withAppChecks(stores: Omit<FactoryProvider<ReadinessCheck[]>, 'provide'>, app: AppChecks | undefined): Omit<FactoryProvider<ReadinessCheck[]>, 'provide'> {
  if (!app) return stores;
  const storeInject = stores.inject ?? [];
  return {
    inject: [...storeInject, ...app.inject],
    useFactory: (...deps: unknown[]) => [...(stores.useFactory(...deps.slice(0, storeInject.length)) as ReadinessCheck[]), ...app.useFactory(...deps.slice(storeInject.length))],
  };
}

/** Builds the root module of an app: platform (logs, health, metrics) + its stores + its features. */
export function meldAppModule(def: MeldAppDefinition, env: NodeJS.ProcessEnv = process.env): DynamicModule {
  const common = loadConfig(z.object({ LOG_LEVEL: envVars.logLevel }), env);
  // The gateway signs principals (its own config loads the master key); every other app checks them with its own key.
  const verifier = def.publicFacing ? [] : [principalVerifierModule(def.name, env)];
  const stores = loadStoreConfig(def.stores, env);
  return {
    module: MeldAppModule,
    imports: [
      StoresModule.forRoot(def.name, def.stores, stores),
      PlatformModule.forRoot({ app: def.name, logLevel: common.LOG_LEVEL, imports: def.checks?.imports, checks: withAppChecks(storeChecks(def.stores), def.checks), ownHealth: def.ownHealth }),
      ...verifier,
      ...(def.imports ?? []),
    ],
    // Internal apps publish their routes for the gateway to merge into /v1/openapi.json.
    controllers: [...(def.publicFacing ? [] : [OpenApiController]), ...(def.controllers ?? [])],
    providers: [
      { provide: APP_NAME, useValue: def.name },
      { provide: APP_FILTER, useClass: HttpErrorFilter },
      ...(def.publicFacing ? [] : [{ provide: APP_GUARD, useClass: PrincipalGuard }]),
      ...(def.providers ?? []),
    ],
  };
}

/** Entry point of every app's main.ts. */
export async function runMeldApp(def: MeldAppDefinition, env: NodeJS.ProcessEnv = process.env) {
  const { MELD_HOST: host, PORT: port, MELD_CPU_NICE: nice } = loadConfig(
    z.object({ MELD_HOST: envVars.host, PORT: envVars.port(def.port), MELD_CPU_NICE: z.coerce.number().int().min(0).max(19).default(def.cpuNice ?? 0) }),
    { ...env, PORT: env[def.portEnv ?? 'PORT'] },
  );
  lowerCpuPriority(nice);
  const trustProxy = def.publicFacing ? env.MELD_TRUST_PROXY || false : true;
  return bootstrapApp({ app: def.name, module: meldAppModule(def, env), host, port, bodyLimit: def.bodyLimit, decodeBodies: def.decodeBodies, trustProxy, maxHeaderSize: maxHeaderBytesFor(def.publicFacing) });
}

/** A failed start prints one clear line (e.g. which variable is invalid) and exits non-zero. */
export function exitOnStartupError(err: unknown): never {
  // The config's messages name the variable; a store's text that can quote input is withheld (ADR 0338).
  process.stderr.write(`startup failed: ${safeErrorMessage(err)}\n`);
  process.exit(1);
}

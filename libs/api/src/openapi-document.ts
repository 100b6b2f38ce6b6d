import type { HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import { ApplicationConfig } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * The OpenAPI document of the app this runs in, built from its controllers' decorators.
 * SwaggerModule wants the INestApplication, which no provider can inject; what it reads of
 * it is the module container, the HTTP adapter and the (empty: no global prefix, no
 * versioning) application config, which providers can have. This lets each app serve its
 * own document from a controller, lazily, with no change to how apps are bootstrapped.
 */
export function scanAppDocument(modules: ModulesContainer, adapterHost: HttpAdapterHost, title: string): OpenAPIObject {
  const app = {
    container: { getModules: () => modules, isGlobalModule: () => false },
    config: new ApplicationConfig(),
    getHttpAdapter: () => adapterHost.httpAdapter,
  };
  // Loaded here, on the first request for a document, not at boot: most processes (and Jest
  // files) never build one, and the package costs ~400 ms of CPU to load (ADR 0355).
  const { DocumentBuilder, SwaggerModule }: typeof import('@nestjs/swagger') = require('@nestjs/swagger');
  const config = new DocumentBuilder().setTitle(title).setVersion('2.0.0').build();
  return SwaggerModule.createDocument(app as never, config, { autoTagControllers: false });
}

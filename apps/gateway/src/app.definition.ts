import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';
import { SystemHealthController } from './health/system-health.controller';
import { APP_URLS, loadAppUrls } from './upstreams/app-urls';

export const appDefinition: MeldAppDefinition = {
  name: 'gateway',
  port: APPS.gateway.port,
  portEnv: 'MELD_PORT',
  stores: APPS.gateway.stores,
  ownHealthz: true,
  publicFacing: true,
  controllers: [SystemHealthController],
  providers: [{ provide: APP_URLS, useFactory: () => loadAppUrls() }],
};

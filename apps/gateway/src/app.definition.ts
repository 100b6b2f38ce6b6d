import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';
import { AdminModule } from './admin/admin.module';
import { DocsModule } from './docs/docs.module';
import { SystemHealth } from './health/system-health';
import { SystemHealthController } from './health/system-health.controller';
import { OpsServer } from './ops/ops-server';
import { PublicApiModule } from './public-api/public-api.module';
import { APP_URLS, loadAppUrls } from './upstreams/app-urls';

export const appDefinition: MeldAppDefinition = {
  name: 'gateway',
  port: APPS.gateway.port,
  portEnv: 'MELD_PORT',
  stores: APPS.gateway.stores,
  ownHealth: true,
  publicFacing: true,
  imports: [PublicApiModule, AdminModule, DocsModule],
  controllers: [SystemHealthController],
  providers: [{ provide: APP_URLS, useFactory: () => loadAppUrls() }, SystemHealth, OpsServer],
};

import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';
import { ReadinessController } from './readiness/readiness.controller';
import { ReadinessRepository } from './readiness/readiness.repository';
import { GetReadiness } from './readiness/usecases/get-readiness/get-readiness.usecase';

export const appDefinition: MeldAppDefinition = {
  name: 'readiness',
  port: APPS['readiness'].port,
  stores: APPS['readiness'].stores,
  controllers: [ReadinessController],
  providers: [ReadinessRepository, GetReadiness],
};

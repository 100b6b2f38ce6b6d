import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';

export const appDefinition: MeldAppDefinition = {
  name: 'readiness',
  port: APPS['readiness'].port,
  stores: APPS['readiness'].stores,
};

import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';

export const appDefinition: MeldAppDefinition = {
  name: 'probes',
  port: APPS['probes'].port,
  stores: APPS['probes'].stores,
};

import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';

export const appDefinition: MeldAppDefinition = {
  name: 'oauth',
  port: APPS['oauth'].port,
  stores: APPS['oauth'].stores,
};

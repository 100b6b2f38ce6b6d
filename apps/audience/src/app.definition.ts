import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';

export const appDefinition: MeldAppDefinition = {
  name: 'audience',
  port: APPS['audience'].port,
  stores: APPS['audience'].stores,
};

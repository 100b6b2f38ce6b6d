import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';

export const appDefinition: MeldAppDefinition = {
  name: 'identity-merge',
  port: APPS['identity-merge'].port,
  stores: APPS['identity-merge'].stores,
};

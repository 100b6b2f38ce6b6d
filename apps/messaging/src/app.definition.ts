import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';

export const appDefinition: MeldAppDefinition = {
  name: 'messaging',
  port: APPS['messaging'].port,
  stores: APPS['messaging'].stores,
};

import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';

export const appDefinition: MeldAppDefinition = {
  name: 'ingest',
  port: APPS['ingest'].port,
  stores: APPS['ingest'].stores,
};

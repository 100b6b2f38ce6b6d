import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';
import { SmsModule } from './sms/sms.module';

export const appDefinition: MeldAppDefinition = {
  name: 'messaging',
  port: APPS['messaging'].port,
  stores: APPS['messaging'].stores,
  imports: [SmsModule],
};

import { APPS } from '@meld/contracts';
import type { MeldAppDefinition } from '@meld/platform';
import { messagingRole } from './messaging-role';
import { SendQueue } from './sms/delivery/send-queue';
import { smscChecks } from './sms/delivery/smsc-readiness';
import { SmsModule } from './sms/sms.module';

export const appDefinition: MeldAppDefinition = {
  name: 'messaging',
  port: APPS['messaging'].port,
  stores: APPS['messaging'].stores,
  imports: [SmsModule],
  // The SMPP session of the processes that deliver (ADR 0348).
  checks: { imports: [SmsModule], inject: [SendQueue], useFactory: (queue: SendQueue) => smscChecks({ state: () => queue.smscState() }, messagingRole()) },
};

import { Module } from '@nestjs/common';
import { AudienceConsumer } from '../audience/audience.consumer';
import { SmsRedaction } from '../audience/sms-redaction';
import { SmsAudienceBackfill } from '../audience/sms-audience-backfill';
import { LinksModule } from '../links/links.module';
import { SendQueue } from './delivery/send-queue';
import { GetSms } from './read/get-sms.usecase';
import { ListSms } from './read/list-sms.usecase';
import { SendBatch } from './send/send-batch';
import { SendDirectSms } from './send/send-direct.usecase';
import { SmsController } from './sms.controller';
import { SmsRepository } from './sms.repository';
import { smsOutboxRelay } from './status/sms-outbox-relay';
import { StatusWriter } from './status/status-writer';
import { WebhookDeliveries } from '../webhooks/webhook-deliveries.repository';
import { WebhookDispatcher } from '../webhooks/webhook-dispatcher';
import { WebhookOutbox } from '../webhooks/webhook-outbox';

/** Direct SMS: the send endpoint, delivery over SMPP through BullMQ, status changes through the outbox and to the organization's webhook, the redaction of deleted contacts' messages. */
@Module({ imports: [LinksModule], controllers: [SmsController], providers: [SmsRepository, smsOutboxRelay, StatusWriter, SendQueue, SendBatch, SendDirectSms, GetSms, ListSms, WebhookDeliveries, WebhookDispatcher, WebhookOutbox, SmsRedaction, SmsAudienceBackfill, AudienceConsumer], exports: [SendQueue] })
export class SmsModule {}

import { Module } from '@nestjs/common';
import { SendersController } from './senders.controller';
import { SendersRepository } from './senders.repository';
import { ListSenders } from './usecases/list-senders/list-senders.usecase';

/** `GET /v1/project/:project/channel/{sms,rcs}/sender` (list filter). */
@Module({ controllers: [SendersController], providers: [SendersRepository, ListSenders] })
export class SendersModule {}

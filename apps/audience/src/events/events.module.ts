import { Module } from '@nestjs/common';
import { EventsController } from './events.controller';
import { EventsRepository } from './events.repository';
import { ListEvents } from './list-events.usecase';

/** `GET /v1/project/:project/audience/:audienceId/events`; the app imports it (appDefinition.imports). */
@Module({ controllers: [EventsController], providers: [EventsRepository, ListEvents] })
export class EventsModule {}

import { Module } from '@nestjs/common';
import { SegmentsModule } from '../segments/segments.module';
import { ScrollCipher } from '../shared/scroll-cipher';
import { EventListing } from './event-listing';
import { EventListsController } from './event-lists.controller';
import { EventListsRepository } from './event-lists.repository';
import { ScrollEvents } from './usecases/scroll-events/scroll-events.usecase';
import { SearchEvents } from './usecases/search-events/search-events.usecase';

/** `/v1/project/:project/event/scroll` and `/search`: the project's events, in date windows (ADR 0332). */
@Module({ imports: [SegmentsModule], controllers: [EventListsController], providers: [EventListsRepository, EventListing, ScrollCipher, ScrollEvents, SearchEvents], exports: [EventListing] })
export class EventListsModule {}

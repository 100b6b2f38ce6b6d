import { Module } from '@nestjs/common';
import { EventListsModule } from '../event-lists/event-lists.module';
import { SegmentsModule } from '../segments/segments.module';
import { EventAggregationsController } from './event-aggregations.controller';
import { EventAggregationsRepository } from './event-aggregations.repository';
import { AggregateEvents } from './usecases/aggregate-events/aggregate-events.usecase';

/** `POST /v1/project/:project/event/aggregations`: exact aggregates of the project's events (ADR 0335). */
@Module({ imports: [EventListsModule, SegmentsModule], controllers: [EventAggregationsController], providers: [EventAggregationsRepository, AggregateEvents] })
export class EventAggregationsModule {}

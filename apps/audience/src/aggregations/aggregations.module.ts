import { Module } from '@nestjs/common';
import { CountModule } from '../count/count.module';
import { SegmentsModule } from '../segments/segments.module';
import { AggregationsController } from './aggregations.controller';
import { AggregationsRepository } from './aggregations.repository';
import { AggregateAudience } from './usecases/aggregate-audience/aggregate-audience.usecase';

/** `POST /v1/project/:project/audience/aggregations`: exact terms and stats over a filtered audience (ADR 0333). */
@Module({ imports: [CountModule, SegmentsModule], controllers: [AggregationsController], providers: [AggregationsRepository, AggregateAudience] })
export class AggregationsModule {}
